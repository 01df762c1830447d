"""VDA 5050 across floors, driven by `vda5050-sdk`'s `MasterClient` (unmodified) against
`fleetsim vda5050` in a subprocess: each building level is a mapId, the vehicle reports the
level it is on, and an order whose nodes change map at a lift is driven through the lift (the
vehicle calls it, rides it and leaves it); an order changing map anywhere else is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..conftest import scenario
from ..site.buildings import TOWER
from .helpers import serving
from .master import Master, builder, run

vda = pytest.importorskip("vda5050")

SCENARIO = """
simulation: {timestep: 0.05}
site: {file: tower.building.yaml}
robots:
  - {name: diff_0, model: mobile_robot, motion_mode: differential, start: park_L1}
  - {name: omni_0, model: mobile_robot, motion_mode: omnidirectional, start: park_L2}
"""


@pytest.fixture(scope="module")
def served(real_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("floors")
    (folder / "tower.building.yaml").write_text(TOWER)
    with serving(scenario(folder, SCENARIO), real_broker.url, "--rtf", "4", ready="vehicles 2"):
        yield real_broker


def order(order_id: str, stops: list[tuple[str, float, float, str]], serial: str = "diff_0") -> Any:
    made = builder(order_id, serial)
    for k, (name, x, y, level) in enumerate(stops):
        made.add_node(name, x=x, y=y, map_id=level)
        if k:
            made.add_edge(stops[k - 1][0], name)
    return made.build()


def test_an_order_across_floors_rides_the_lift(served: Any) -> None:
    async def check(master: Master) -> None:
        start = await master.until(lambda: master.last("diff_0"))
        assert start.agv_position.map_id == "L1"
        elsewhere = order("nowhere", [("park_L1", 0, 3, "L1"), ("lab", 0, 0, "L3")])
        result = await master.client.dispatch(elsewhere, "fleetsim/diff_0")
        refused = await master.until(
            lambda: [e for e in master.errors if "outside a lift" in e.error.error_description]
        )
        assert refused and not master.last("diff_0").node_states
        stops = [
            ("park_L1", 0, 3, "L1"),
            ("dock", 0, 0, "L1"),
            ("hall_L1", 4, 0, "L1"),
            ("lift_L1", 8, 0, "L1"),
            ("lift_L3", 8, 0, "L3"),
            ("hall_L3", 4, 0, "L3"),
        ]
        result = await master.client.dispatch(order("up", stops), "fleetsim/diff_0")
        assert result.accepted, result
        done = await master.when(
            "diff_0",
            lambda s: s.last_node_id == "hall_L3" and not s.node_states and not s.driving,
            seconds=120,
        )
        assert done.agv_position.map_id == "L3"
        assert (done.agv_position.x, done.agv_position.y) == pytest.approx((4, 0), abs=0.3)
        seen = {s.agv_position.map_id for s in master.states["diff_0"]}
        assert seen == {"L1", "L3"}  # L1, then (after the ride) L3

    run(check, served, serials=("diff_0",))


def test_an_order_on_an_upper_map_is_driven_on_that_floor(served: Any) -> None:
    """An omnidirectional vehicle on L2 (directly above L1's corridor) drives an order on map L2
    and stays there: every state it sends is on L2 (its height gives its map)."""

    async def check(master: Master) -> None:
        start = await master.until(lambda: master.last("omni_0"))
        assert start.agv_position.map_id == "L2"
        stops = [("park_L2", 0, 3, "L2"), ("ward", 0, 0, "L2"), ("hall_L2", 4, 0, "L2")]
        result = await master.client.dispatch(order("upstairs", stops, "omni_0"), "fleetsim/omni_0")
        assert result.accepted, result
        done = await master.when(
            "omni_0",
            lambda s: s.last_node_id == "hall_L2" and not s.node_states and not s.driving,
            seconds=60,
        )
        assert (done.agv_position.x, done.agv_position.y) == pytest.approx((4, 0), abs=0.3)
        assert {s.agv_position.map_id for s in master.states["omni_0"]} == {"L2"}

    run(check, served, serials=("omni_0",))
