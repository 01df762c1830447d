"""The fast state JSON is the pydantic model's: an idle vehicle's template gives exactly what the
general path gives (with '%' and quotes in its names), and both parse as a `State`."""

from __future__ import annotations

import json

import pytest

from fleetsim import Agent, Pose
from fleetsim.interfaces.vda5050 import State
from fleetsim.interfaces.vda5050.encode import Motion
from fleetsim.interfaces.vda5050.messages import parse
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle

from ..conftest import make_sim
from .helpers import straight

STAMP = "2026-11-23T10:00:00.125Z"


def general(vehicle: Vehicle, m: Motion, header_id: int) -> str:
    """The state through the general (non-template) path."""
    return vehicle.out.composed(header_id, STAMP, m)


@pytest.mark.parametrize("manufacturer", ["fleetsim", "100%_robots"])
def test_the_idle_template_matches_the_general_path(manufacturer: str) -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(1.5, -2.25, 0), sim_core=sim, name='amr "7"'
        )
        vehicle = Vehicle(robot, Topics(manufacturer=manufacturer), map_id="hall %d")
        vehicle.battery = 87.5
        for k, m in enumerate(
            [vehicle.motion(), Motion(1e-7, -3.0, 3.14159, 0.5, -0.25, 1e3, True)]
        ):
            fast = vehicle.state_json(STAMP, m)
            assert fast == general(vehicle, m, k)
            state = parse(State, fast, "state")
            assert isinstance(state, State) and state.header_id == k
            assert state.agv_position is not None and state.agv_position.map_id == "hall %d"
            assert state.serial_number == 'amr "7"' and state.manufacturer == manufacturer
        assert json.loads(fast)["velocity"] == {"vx": 0.5, "vy": -0.25, "omega": 1000.0}
        vehicle.book.last_node_id = "n9"  # a new key: a new template
        assert json.loads(vehicle.state_json(STAMP, m))["lastNodeId"] == "n9"
        assert vehicle.take_order(straight(["n0", "n1"], released=2)) is False  # not at n0
        assert vehicle.errors  # now the general path
        assert json.loads(vehicle.state_json(STAMP, m))["errors"][0]["errorType"] == (
            "noRouteError"
        )
