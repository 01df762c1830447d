"""Doors pinned down where a plausible bug would go unseen: a door asked to open while it is
closing opens again (the robot waiting for it is not left waiting for ever), and a door that
is partly open is still a wall (a robot driven into it collides with it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.devices import DoorMode
from fleetsim.site import Site

from .buildings import HOUSE


@pytest.fixture
def sim(tmp_path: Path) -> MultiRobotSimulationCore:
    path = tmp_path / "house.building.yaml"
    path.write_text(HOUSE)
    core = MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0, timestep=0.1))
    core.set_site(Site.from_building(path))
    return core


def test_a_door_asked_to_open_while_closing_opens_again(sim: MultiRobotSimulationCore) -> None:
    with sim:
        doors = sim.doors
        door = doors["main_door"]
        doors.open("main_door", "robot")
        sim.run_simulation(duration=door.move_s + 0.2)
        assert door.mode is DoorMode.OPEN
        doors.close("main_door", "robot")
        sim.run_simulation(duration=door.move_s / 2)
        assert door.mode is DoorMode.CLOSING and 0.3 < door.opened < 0.7
        doors.open("main_door", "robot")  # asked again half way
        assert door.mode is DoorMode.OPENING
        sim.run_simulation(duration=door.move_s / 2 + 0.2)  # only the half it had closed
        assert door.mode is DoorMode.OPEN and door.opened == pytest.approx(1.0)


def test_a_door_partly_open_is_still_a_wall(sim: MultiRobotSimulationCore) -> None:
    with sim:
        doors = sim.doors
        door = doors["main_door"]
        door.move_s = 20.0  # a slow door: the robot is at it long before it is open
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(3, 0, 0), sim_core=sim, motion_mode="differential"
        )
        doors.open("main_door", "robot")
        sim.run_simulation(duration=door.move_s * 0.6)
        assert door.mode is DoorMode.OPENING and 0.4 < door.opened < 0.8
        robot.set_goal(Pose.from_xyz(9, 0, 0), align_orientation=False)
        hit: list[float] = []
        modes: list[DoorMode] = []
        sim.on("collision_started", lambda *_: (hit.append(sim.sim_time), modes.append(door.mode)))
        for _ in range(60):  # 6 s: it reaches the doorway before the door is open
            sim.step_once()
        assert hit and sim.collision_counts["robot-structure"] >= 1
        assert modes[0] is DoorMode.OPENING  # it hit the door while the door was opening
