"""Edge trajectories (NURBS): the evaluator draws exact conics from weighted control points, a
bad knot vector rejects the order, and a vehicle drives the curve, not the chord."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import Agent, Pose
from fleetsim.interfaces.vda5050 import nurbs
from fleetsim.interfaces.vda5050.messages import OrientationType, Trajectory
from fleetsim.interfaces.vda5050.order_rules import order_problems
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle

from ..conftest import make_sim
from .helpers import straight

# a quarter circle of radius 3 about (0, 3), from (0, 0) to (3, 3): a rational quadratic
QUARTER = Trajectory.model_validate(
    {
        "degree": 2,
        "knotVector": [0, 0, 0, 1, 1, 1],
        "controlPoints": [
            {"x": 0, "y": 0, "weight": 1},
            {"x": 3, "y": 0, "weight": math.sqrt(0.5)},
            {"x": 3, "y": 3, "weight": 1},
        ],
    }
)


def test_a_weighted_quadratic_is_an_exact_circle_arc() -> None:
    points = nurbs.evaluate(QUARTER, np.linspace(0, 1, 50))
    assert np.allclose(np.hypot(points[:, 0], points[:, 1] - 3.0), 3.0, atol=1e-12)
    assert points[0] == pytest.approx((0, 0)) and points[-1] == pytest.approx((3, 3))
    line = Trajectory.model_validate(
        {
            "degree": 1,
            "knotVector": [0, 0, 1, 1],
            "controlPoints": [{"x": 1, "y": 1}, {"x": 5, "y": -3}],
        }
    )
    assert nurbs.evaluate(line, np.array([0.25]))[0] == pytest.approx((2.0, 0.0))
    sampled = nurbs.sample(QUARTER)
    gaps = np.hypot(*np.diff(sampled, axis=0).T)
    assert len(sampled) == math.ceil(3 * math.pi / 2 / nurbs.SPACING_M) + 1 and gaps.max() < 0.3


def test_a_trajectory_the_standard_does_not_allow_rejects_the_order() -> None:
    order = straight(["n0", "n1"], released=2)
    order.edges[0].trajectory = QUARTER.model_copy(update={"knot_vector": [0, 0, 1, 1]})
    (problem,) = order_problems(order)
    assert "knotVector has 4 values; a degree 2 curve with 3 control points needs 6" in problem


def test_the_vehicle_drives_the_curve() -> None:
    with make_sim(timestep=0.05, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_0", max_linear_vel=1.0
        )
        vehicle = Vehicle(robot, Topics())
        order = straight(["n0", "n1"], released=2)
        end = order.nodes[1].node_position
        assert end is not None
        end.x, end.y = 3.0, 3.0
        order.edges[0].trajectory = QUARTER
        assert vehicle.take_order(order)
        trace = []
        for _ in range(600):
            sim.step_once()
            vehicle.step(0.05)
            trace.append(robot.get_pose().position[:2])
            if vehicle.book.idle and not robot.is_moving:
                break
        assert vehicle.book.last_node_id == "n1"
        xy = np.array(trace)
        radius = np.hypot(xy[:, 0], xy[:, 1] - 3.0)
        assert np.all(np.abs(radius - 3.0) < 0.1)  # on the arc all the way (the chord: 2.12)


def test_edge_orientation_is_held_by_an_omnidirectional_vehicle() -> None:
    """GLOBAL: the vehicle faces +y while driving along +x; TANGENTIAL pi: it drives backwards.
    A differential vehicle refuses any orientation but forwards."""
    with make_sim(timestep=0.05, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(0, 0, 0),
            sim_core=sim,
            name="amr_0",
            motion_mode="omnidirectional",
            max_linear_vel=0.5,
        )
        vehicle = Vehicle(robot, Topics())
        order = straight(["n0", "n1", "n2"], released=3)
        order.edges[0].orientation = math.pi / 2
        order.edges[0].orientation_type = OrientationType.GLOBAL
        order.edges[1].orientation = math.pi  # tangential by default: backwards
        assert vehicle.take_order(order)
        yaw_mid_first, yaw_mid_second = None, None
        for _ in range(1200):
            sim.step_once()
            vehicle.step(0.05)
            x = robot.get_pose().position[0]
            if 2.0 < x < 2.5:
                yaw_mid_first = robot.get_pose().yaw
            if 5.0 < x < 5.5:
                yaw_mid_second = robot.get_pose().yaw
            if vehicle.book.idle and not robot.is_moving:
                break
        assert vehicle.book.last_node_id == "n2"
        assert yaw_mid_first == pytest.approx(math.pi / 2, abs=0.05)
        assert abs(abs(yaw_mid_second or 0.0) - math.pi) < 0.05
        differential = Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(0, 5, 0),
            sim_core=sim,
            name="amr_1",
            motion_mode="differential",
        )
        refusing = Vehicle(differential, Topics())
        order = straight(["n0", "n1"], released=2)
        for node in order.nodes:
            assert node.node_position is not None
            node.node_position.y = 5.0
        order.edges[0].orientation = math.pi
        assert not refusing.take_order(order)
        assert "drives forwards along an edge only" in str(refusing.errors[-1].error_description)
        order.edges[0].orientation = 0.0
        assert refusing.take_order(order)
