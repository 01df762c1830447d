"""fleetsim's VDA 5050 vehicles driven by an independent master control: `vda5050-sdk`'s
`MasterClient` (from the package index, unmodified), over a real broker, against `fleetsim
vda5050` run as a user runs it (a subprocess). The master validates every message against its
own copy of the standard's JSON schemas, reads the factsheet and refuses to send what it does
not declare."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from ..conftest import scenario
from .helpers import serving
from .master import Master, builder, run

vda = pytest.importorskip("vda5050")

SCENARIO = """
simulation: {timestep: 0.05}
robots:
  - {name: diff_0, model: mobile_robot, motion_mode: differential, pose: {position: [0, 0, 0]}}
  - {name: omni_0, model: mobile_robot, motion_mode: omnidirectional,
     pose: {position: [0, 6, 0]}}
"""
START = "2030-05-17T08:00:00Z"


@pytest.fixture(scope="module")
def served(real_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`fleetsim vda5050` on the broker, at 2x real time, its clock starting at START."""
    path = scenario(tmp_path_factory.mktemp("vda"), SCENARIO)
    with serving(path, real_broker.url, "--rtf", "2", "--start-time", START, ready="vehicles 2"):
        yield real_broker


def line_order(order_id: str, start: tuple[float, float], xs: list[float], **node: Any) -> Any:
    builder_ = builder(order_id, "diff_0")
    x0, y = start
    builder_.add_node("start", x=x0, y=y, map_id="site")
    names = ["start"]
    for k, x in enumerate(xs):
        name = f"p{k}"
        builder_.add_node(name, x=x, y=y, map_id="site", **(node if k == len(xs) - 1 else {}))
        builder_.add_edge(names[-1], name)
        names.append(name)
    return builder_.build()


def test_pause_then_resume_mid_edge_drives_on(served: Any) -> None:
    async def check(master: Master) -> None:
        start = await master.until(lambda: master.last("diff_0"))
        x0, y0 = start.agv_position.x, start.agv_position.y
        result = await master.client.dispatch(
            line_order("pause-1", (x0, y0), [x0 + 8.0]), "fleetsim/diff_0"
        )
        assert result.accepted, result
        await master.when("diff_0", lambda s: s.driving and s.agv_position.x > x0 + 1.5)
        await master.client.pause("fleetsim/diff_0", action_id="pause-a")
        paused = await master.when("diff_0", lambda s: s.paused and not s.driving)
        held_at = paused.agv_position.x
        await asyncio.sleep(1.0)
        assert master.last("diff_0").agv_position.x == pytest.approx(held_at, abs=1e-3)
        await master.client.resume("fleetsim/diff_0", action_id="resume-a")
        done = await master.when(
            "diff_0", lambda s: not s.node_states and s.last_node_id == "p0" and not s.driving
        )
        assert done.paused is False
        assert done.agv_position.x == pytest.approx(x0 + 8.0, abs=0.3)
        statuses = {a.action_id: a.action_status.value for a in done.action_states}
        assert statuses["pause-a"] == "FINISHED" and statuses["resume-a"] == "FINISHED"

    run(check, served)


def test_the_factsheet_declares_the_optional_fields_the_vehicle_acts_on(served: Any) -> None:
    """The master refuses to send optional fields the factsheet does not list: theta,
    allowedDeviationXY/Theta and edge orientation reach the vehicle and are acted on."""

    async def check(master: Master) -> None:
        start = await master.until(lambda: master.last("omni_0"))
        x0, y0 = start.agv_position.x, start.agv_position.y
        oriented = builder("orient-1", "omni_0")
        oriented.add_node("a", x=x0, y=y0, map_id="site", allowed_deviation_xy=0.3)
        oriented.add_node(
            "b",
            x=x0 + 3.0,
            y=y0,
            theta=math.pi / 2,
            map_id="site",
            allowed_deviation_xy=0.1,
            allowed_deviation_theta=0.05,
        )
        oriented.add_edge(
            "a",
            "b",
            max_speed=0.8,
            orientation=math.pi / 2,
            orientation_type=vda.model.enums.OrientationType.GLOBAL,
        )
        order = oriented.build()
        registry = master.client.capabilities("fleetsim/omni_0")
        assert registry.declares_optional_parameters
        result = await master.client.dispatch(order, "fleetsim/omni_0")
        assert result.accepted, result  # not refused for an undeclared field
        driving = await master.when("omni_0", lambda s: s.driving and s.agv_position.x > x0 + 1.0)
        assert driving.agv_position.theta == pytest.approx(math.pi / 2, abs=0.05)  # GLOBAL
        done = await master.when("omni_0", lambda s: s.last_node_id == "b" and not s.driving)
        assert done.agv_position.theta == pytest.approx(math.pi / 2, abs=0.05)
        undeclared = builder("zones-1", "omni_0", zone_set_id="zones")
        undeclared.add_node("b", x=x0 + 3.0, y=y0, map_id="site")
        zoned = undeclared.build()
        refused = await master.client.dispatch(zoned, "fleetsim/omni_0")
        assert not refused.accepted and "zoneSetId" in (refused.detail or "")

    run(check, served)


def test_a_new_order_while_one_runs_is_an_order_update_error(served: Any) -> None:
    """A second master control that has not seen the vehicle's state sends new orders while
    the first one's runs, once while the vehicle drives and once while its last node's action
    runs (no nodes left): the vehicle rejects both with `orderUpdateError` (the standard's
    acceptance process, Figure 8 of 2.0: nodes left, or an action neither FINISHED nor FAILED;
    the orderId and orderUpdateId as references) and finishes the first order, its action
    included."""

    async def check(master: Master) -> None:
        start = await master.until(lambda: master.last("diff_0"))
        x0, y0 = start.agv_position.x, start.agv_position.y
        duration = vda.ActionParameter(key="duration", value=6.0)
        wait = vda.Action(
            action_type="wait",
            action_id="w1",
            action_parameters=[duration],
            blocking_type=vda.BlockingType.HARD,
        )
        first = line_order("busy-1", (x0, y0), [x0 - 6.0], actions=[wait])
        assert (await master.client.dispatch(first, "fleetsim/diff_0")).accepted

        def waiting(s: Any, status: str) -> bool:
            return any(
                a.action_id == "w1" and a.action_status.value == status for a in s.action_states
            )

        moments = {
            "busy-2": lambda s: s.driving,
            "busy-3": lambda s: not s.node_states and waiting(s, "RUNNING"),
        }
        for order_id, moment in moments.items():
            here = (await master.when("diff_0", moment)).agv_position
            second = line_order(order_id, (here.x, here.y), [here.x + 2.0])
            other = vda.MasterClient(vda.MasterConfig(broker_url=served.url, subscriptions=()))
            await other.connect()
            try:
                assert (await other.dispatch(second, "fleetsim/diff_0")).accepted  # it sent it
                await asyncio.sleep(0.5)  # on its way before the client disconnects
            finally:
                await other.disconnect()
            error = await master.until(
                lambda o=order_id: next((e for e in master.errors if o in str(e)), None)
            )
            assert error.error.error_type == "orderUpdateError", error
            refs = {r.reference_key: r.reference_value for r in error.error.error_references}
            assert refs["orderId"] == order_id and refs["orderUpdateId"] == "0", refs
        done = await master.when(
            "diff_0", lambda s: s.order_id == "busy-1" and waiting(s, "FINISHED")
        )
        assert done.agv_position.x == pytest.approx(x0 - 6.0, abs=0.3)

    run(check, served)


def test_timestamps_are_wall_clock_from_the_start_time(served: Any) -> None:
    async def check(master: Master) -> None:
        state = await master.until(lambda: master.last("diff_0"))
        stamp = state.header_id, state.timestamp
        moment = (
            stamp[1]
            if isinstance(stamp[1], datetime)
            else datetime.fromisoformat(str(stamp[1]).replace("Z", "+00:00"))
        )
        begin = datetime.fromisoformat(START.replace("Z", "+00:00"))
        assert begin <= moment < begin.replace(hour=begin.hour + 1), moment

    run(check, served)


def test_default_timestamps_are_now(tmp_path: Path, real_broker: Any) -> None:
    path = scenario(tmp_path, SCENARIO.replace("diff_0", "now_0").replace("omni_0", "now_1"))
    with serving(path, real_broker.url, "--duration", "5"):

        async def check(master: Master) -> None:
            state = await master.until(lambda: master.last("now_1"))
            moment = state.timestamp
            if not isinstance(moment, datetime):
                moment = datetime.fromisoformat(str(moment).replace("Z", "+00:00"))
            age = abs((datetime.now(timezone.utc) - moment).total_seconds())
            assert age < 30, moment  # not 1970

        run(check, real_broker, ("now_0", "now_1"))
