"""A simulated robot as a VDA 5050 vehicle (real PyBullet, no network): it drives the base of an
order and stops at the decision point, obeys edge speed limits, lets nodes go as it passes
them, continues when an update releases the horizon, and reports it all in its state."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose
from fleetsim.interfaces.vda5050 import State
from fleetsim.interfaces.vda5050.messages import parse
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle
from fleetsim.site import Site

from ..conftest import make_sim
from .helpers import straight


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        yield s


def test_the_base_is_driven_to_the_decision_point_then_the_update(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = Agent.from_urdf(
        "mobile_robot",
        Pose.from_xyz(0, 0, 0),
        sim_core=sim,
        name="amr_0",
        motion_mode="differential",
        max_linear_vel=1.5,
    )
    vehicle = Vehicle(robot, Topics())
    assert vehicle.take_order(straight(["n0", "n1", "n2", "n3"], released=3, speeds={"n1": 0.5}))
    fastest_to_n1, furthest = 0.0, 0.0
    for _ in range(400):
        sim.step_once()
        vehicle.step()
        x = robot.get_pose().position[0]
        speed = float(np.hypot(*robot.get_velocity()[0][:2]))
        if x < 2.8:
            fastest_to_n1 = max(fastest_to_n1, speed)
        furthest = max(furthest, x)
        if vehicle.book.last_node_id == "n2" and not robot.is_moving:
            break
    assert vehicle.book.last_node_id == "n2" and vehicle.book.last_node_sequence_id == 4
    assert furthest < 6.1  # stopped at the decision point, not on towards the horizon
    assert fastest_to_n1 <= 0.5 + 1e-6  # the edge's maxSpeed
    state = vehicle.state(sim.sim_time)
    assert [n.node_id for n in state.node_states] == ["n3"] and not state.node_states[0].released
    assert [e.edge_id for e in state.edge_states] == ["n2n3"] and state.driving is False
    update = straight(["n2", "n3"], released=2, first_seq=4, update=1)
    assert vehicle.take_order(update)
    for _ in range(300):
        sim.step_once()
        vehicle.step()
        if vehicle.book.idle and not robot.is_moving:
            break
    assert vehicle.book.last_node_id == "n3" and vehicle.book.idle
    assert robot.get_pose().position[0] == pytest.approx(9.0, abs=0.06)
    out = json.loads(vehicle.state(sim.sim_time).to_json())
    assert out["lastNodeId"] == "n3" and out["nodeStates"] == [] and out["errors"] == []
    assert out["orderUpdateId"] == 1 and out["headerId"] == 1  # the second state message
    assert out["agvPosition"]["positionInitialized"] is True
    assert isinstance(parse(State, json.dumps(out), "state"), State)


def test_nodes_without_positions_off_the_site_are_rejected(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_0")
    vehicle = Vehicle(robot, Topics())
    assert not vehicle.take_order(straight(["n0", "n1"], released=2, positions=False))
    (error,) = vehicle.state(0.0).errors
    assert error.error_type == "noRouteError" and "n0, n1" in (error.error_description or "")
    assert not vehicle.take_order(straight(["n3", "n4"], released=2))  # it is not at n3
    assert vehicle.state(0.0).errors[-1].error_type == "noRouteError"
    assert vehicle.take_order(straight(["n0", "n1"], released=2))  # a good order clears them
    assert vehicle.state(0.0).errors == []
    assert vehicle.cancel() and vehicle.book.idle and not robot.is_moving


def test_nodes_without_positions_are_the_sites_nodes(sim: MultiRobotSimulationCore) -> None:
    nodes = [{"name": f"n{k}", "x": 3.0 * k, "y": 0.0} for k in range(3)]
    lanes = [{"from": "n0", "to": "n1"}, {"from": "n1", "to": "n2"}]
    sim.set_site(Site.from_graph(nodes, lanes))
    robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_0")
    vehicle = Vehicle(robot, Topics(), sim.site)
    assert vehicle.take_order(straight(["n0", "n1", "n2"], released=3, positions=False))
    for _ in range(300):
        sim.step_once()
        vehicle.step()
        if vehicle.book.idle and not robot.is_moving:
            break
    assert vehicle.book.last_node_id == "n2"
    assert robot.get_pose().position[0] == pytest.approx(6.0, abs=0.06)
