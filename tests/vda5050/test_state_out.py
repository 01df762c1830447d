"""The one `state` writer: an idle vehicle's template path writes exactly what writing every
field out writes, whatever its ids, mapId, pause, charging or numbers; both parse as `State`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose
from fleetsim.interfaces.vda5050 import State
from fleetsim.interfaces.vda5050.encode import Motion
from fleetsim.interfaces.vda5050.messages import parse, timestamp
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle

from ..conftest import make_sim
from .helpers import straight


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        yield s


MOTIONS = [
    Motion(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False),
    Motion(-3.25, 1e-9, 3.14159, 0.5, -0.25, 1.0, True),
    Motion(1e6, -2.5e-7, -1.5, 1e-300, 0.0, -0.0, True),
]


def both(vehicle: Vehicle, header_id: int, m: Motion) -> tuple[str, str]:
    stamp = timestamp(12.3)
    assert vehicle.out.is_idle()
    return vehicle.out.idle(header_id, stamp, m), vehicle.out.composed(header_id, stamp, m)


def test_the_idle_template_writes_what_composing_writes(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf(
        "mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name='amr "%s" 0'
    )  # a serial with quotes and a %
    vehicle = Vehicle(robot, Topics(manufacturer="ACME %d"), map_id="floor 100%")
    seen = 0
    for setting in range(4):
        if setting == 1:
            vehicle.paused = True
            vehicle.battery = 37.5
        if setting == 2:  # an order driven to its end: ids and last node set, idle again
            vehicle.map_id = "site"  # the order's nodes are on map "site"
            vehicle.paused = False
            assert vehicle.take_order(straight(["n0", "n1"], released=2))
            for _ in range(200):
                sim.step_once()
                vehicle.step()
                if vehicle.book.idle and not robot.is_moving:
                    break
            assert vehicle.book.last_node_id == "n1"
        if setting == 3:
            vehicle.map_id = "L2"
            vehicle.effects.charging = True
        for k, m in enumerate(MOTIONS):
            fast, full = both(vehicle, 7 * setting + k, m)
            assert fast == full
            state = parse(State, fast, "state")
            assert isinstance(state, State) and state.header_id == 7 * setting + k
            assert json.loads(fast)["agvPosition"]["mapId"] == vehicle.map_id
            seen += 1
    assert seen == 12


def test_state_counts_its_headers_and_uses_the_template_only_when_idle(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_1")
    vehicle = Vehicle(robot, Topics())
    first = json.loads(vehicle.state_json(timestamp(0.0), MOTIONS[0]))
    assert vehicle.take_order(straight(["n0", "n1", "n2"], released=2))
    assert not vehicle.out.is_idle()  # an order: every field written out
    second = json.loads(vehicle.state_json(timestamp(0.1), MOTIONS[1]))
    assert (first["headerId"], second["headerId"]) == (0, 1)
    assert second["orderId"] == "o1" and [n["nodeId"] for n in second["nodeStates"]] == [
        "n1",
        "n2",
    ]  # n0 is where it stands: passed at once
