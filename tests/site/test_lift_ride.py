"""The lift ride as one service (`sim.lifts.rides`): boarding only standing still inside the
cabin, one clearance rule for letting go, two robots going the same way in one trip of a
cabin of capacity 2, a route changed while aboard taking the cabin where it now leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.geometry import Pose
from fleetsim.site import Site

from .buildings import TOWER


def cube(sim: MultiRobotSimulationCore, x: float, y: float) -> Agent:
    params = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(x, y, 0.0))
    return Agent.from_params(params, sim)


@pytest.fixture
def sim(tmp_path: Path) -> MultiRobotSimulationCore:
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    core = MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0))
    core.set_site(Site.from_building(path))
    return core


def test_a_ride_boards_inside_rides_and_lets_go_once_out_of_the_shaft(
    sim: MultiRobotSimulationCore,
) -> None:
    with sim:
        rides = sim.lifts.rides
        robot = cube(sim, 4, 0)  # at the entry (the lift's cabin is at (8, 0), 2 x 2 m)
        rides.call("me", "Lift1", "L1", "L3", robot, radius=0.3)
        sim.run_simulation(duration=2.1)
        assert rides.may_enter("me") and not rides.board("me")  # not in the cabin yet
        robot.set_pose(Pose.from_xyz(9.2, 0, 0))  # in the doorway: not inside
        assert not rides.board("me")
        robot.set_pose(Pose.from_xyz(8.2, 0.1, 0))
        assert rides.board("me") and rides.riding("me").phase == "aboard"
        assert not rides.arrived("me")
        sim.run_simulation(duration=2.1 + 8.0 + 2.1)  # doors close, 8 m up, doors open
        assert rides.arrived("me") and robot.get_pose().z == pytest.approx(8.0)
        robot.set_pose(Pose.from_xyz(7.2, 0, 8.0))  # stopped, partly in the cabin
        sim.step_once()
        assert sim.lifts["Lift1"].session == "me"
        robot.set_pose(Pose.from_xyz(6.2, 0, 8.0))  # 1.0 + 0.05 + 0.3 + 0.3 = 1.65 < 1.8
        sim.step_once()
        assert sim.lifts["Lift1"].session is None and rides.riding("me") is None
        assert rides.done == 1


def test_two_robots_going_the_same_way_share_one_trip(sim: MultiRobotSimulationCore) -> None:
    with sim:
        rides, lift = sim.lifts.rides, sim.lifts["Lift1"]
        assert lift.capacity == 2
        a, b = cube(sim, 7.6, -0.5), cube(sim, 7.6, 0.5)  # both in the cabin's place
        rides.call("a", "Lift1", "L1", "L2", a, radius=0.3, share=True)
        rides.call("b", "Lift1", "L1", "L2", b, radius=0.3, share=True)
        rides.call("c", "Lift1", "L1", "L3", cube(sim, 2, 0), radius=0.3, share=True)
        sim.run_simulation(duration=2.1)
        assert lift.session == "a" and lift.guests == ["b"]  # c goes elsewhere: not with them
        assert rides.board("a") and lift.target == "L1"  # waits for b to board
        assert rides.board("b")
        sim.step_once()
        assert lift.target == "L2" and sorted(lift.aboard) == ["a", "b"]
        sim.run_simulation(duration=2.1 + 4.0 + 2.1)
        assert rides.arrived("a") and rides.arrived("b")
        assert a.get_pose().z == pytest.approx(4.0) and b.get_pose().z == pytest.approx(4.0)
        assert lift.trips == 1


def test_a_robot_bound_elsewhere_while_aboard_is_taken_there(sim: MultiRobotSimulationCore) -> None:
    with sim:
        rides, lift = sim.lifts.rides, sim.lifts["Lift1"]
        robot = cube(sim, 8, 0)
        rides.call("me", "Lift1", "L1", "L3", robot)
        sim.run_simulation(duration=2.1)
        assert rides.board("me")
        rides.redirect("me", "L2")  # its route changed: it now leaves on L2
        sim.run_simulation(duration=2.1 + 4.0 + 2.1)
        assert lift.level == "L2" and rides.arrived("me")
        assert robot.get_pose().z == pytest.approx(4.0)


def test_a_robot_driving_out_is_let_go_once_its_footprint_is_out_of_the_shaft(
    sim: MultiRobotSimulationCore,
) -> None:
    """The one clearance rule: the cabin's half width, the shaft's gap, the robot's radius and
    0.3 m; a robot driving away is let go as it passes that, not before."""
    with sim:
        rides, lift = sim.lifts.rides, sim.lifts["Lift1"]
        robot = cube(sim, 8, 0)
        rides.call("me", "Lift1", "L1", "L2", robot, radius=0.4)
        sim.run_simulation(duration=2.1)
        assert rides.board("me")
        sim.run_simulation(duration=2.1 + 4.0 + 2.1)
        assert rides.arrived("me")
        robot.set_goal(Pose.from_xyz(2, 0, 4.0), align_orientation=False)
        let_go = None
        for _ in range(6000):  # (up to 25 s in 1/240 s steps)
            sim.step_once()
            if lift.session is None:
                let_go = 8.0 - robot.get_pose().x
                break
        reach = 1.0 + 0.05 + 0.4 + 0.3
        assert let_go is not None and reach < let_go < reach + 0.05, let_go
