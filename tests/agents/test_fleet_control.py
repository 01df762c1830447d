"""Hold / release, speed override, and where on the site a robot is."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, MoveTo, MultiRobotSimulationCore, Pose
from fleetsim.actions import ActionStatus
from fleetsim.site import Site

from ..conftest import make_sim


@pytest.fixture
def sim() -> MultiRobotSimulationCore:
    with make_sim(timestep=0.1) as s:
        yield s


def speeds(robot: Agent) -> float:
    return float(np.hypot(*robot.get_velocity()[0][:2]))


@pytest.mark.parametrize("mode", ["omnidirectional", "differential"])
def test_hold_stops_within_the_limits_and_release_drives_on(
    sim: MultiRobotSimulationCore, mode: str
) -> None:
    robot = Agent.from_urdf(
        "simple_cube", sim_core=sim, motion_mode=mode, max_linear_vel=2.0, max_linear_accel=0.5
    )
    move = MoveTo(Pose.from_xyz(30, 0, 0))
    robot.add_action(move)
    for _ in range(40):
        sim.step_once()
    assert speeds(robot) == pytest.approx(2.0)
    robot.hold()
    assert robot.is_held
    previous = speeds(robot)
    for _ in range(60):
        sim.step_once()
        assert previous - speeds(robot) <= 0.5 * 0.1 + 1e-9  # braking within max_linear_accel
        previous = speeds(robot)
    assert speeds(robot) == 0.0 and move.status is ActionStatus.IN_PROGRESS
    held_at = robot.get_pose().x
    for _ in range(20):
        sim.step_once()
    assert robot.get_pose().x == held_at  # stays put, with its goal kept
    robot.release()
    for _ in range(400):
        sim.step_once()
    assert move.status is ActionStatus.COMPLETED and robot.get_pose().x == pytest.approx(30.0)


def test_speed_override(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf("simple_cube", sim_core=sim, max_linear_vel=2.0)
    robot.set_speed_override(0.25)
    robot.add_action(MoveTo(Pose.from_xyz(20, 0, 0)))
    top = 0.0
    for _ in range(100):
        sim.step_once()
        top = max(top, speeds(robot))
    assert top == pytest.approx(0.5)
    robot.hold()
    robot.set_speed_override(1.0)  # while held: applies on release
    assert robot.speed_override == 0.0
    robot.release()
    assert robot.speed_override == 1.0
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(ConfigError, match="speed override"):
            robot.set_speed_override(bad)
    arm = Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True, pose=Pose.from_xyz(5, 5, 0))
    with pytest.raises(ConfigError, match="fixed base"):
        arm.hold()


def test_current_node_and_lane(sim: MultiRobotSimulationCore) -> None:
    nodes = [
        {"name": "a", "x": 0, "y": 0},
        {"name": "b", "x": 10, "y": 0},
        {"name": "c", "x": 10, "y": 10},
    ]
    sim.set_site(Site.from_graph(nodes, [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]))
    robot = Agent.from_urdf("simple_cube", Pose.from_xyz(0.05, 0, 0), sim_core=sim)
    assert robot.current_node() == "a" and robot.current_lane() == (0, 0.0)
    robot.set_pose(Pose.from_xyz(10.2, 4.0, 0))
    assert robot.current_node() is None
    lane, distance = robot.current_lane()
    assert lane == 1 and distance == pytest.approx(0.2)
