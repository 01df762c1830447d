"""Doors as devices: a closed door is a wall, it opens and closes in its own time, and the
fleet manager's robots ask for it, wait for it and are never in it unless it is open."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fleetsim.recording
from fleetsim import ConfigError, MultiRobotSimulationCore, SimulationParams
from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.devices import DoorMode
from fleetsim.geometry import Pose
from fleetsim.recording import record
from fleetsim.scenario import build, load_scenario
from fleetsim.site import Site

from .buildings import HOUSE

# Two rooms split by a wall along x = 6 with a sliding door in it (y -1..1); a corridor runs
# through the door from the west room to the east room, parking spots off each end.


@pytest.fixture
def house(tmp_path: Path) -> Path:
    path = tmp_path / "house.building.yaml"
    path.write_text(HOUSE)
    return path


def test_a_door_opens_in_its_time_and_a_closed_door_is_a_wall(house: Path) -> None:
    recording = house.parent / "doors.mcap"
    with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
        sim.set_site(Site.from_building(house))
        record(sim, recording)
        doors = sim.doors
        seen: list[tuple[str, str]] = []
        sim.on("door_changed", lambda door, mode, _t: seen.append((door, mode)))
        assert doors["main_door"].mode is DoorMode.CLOSED and doors["main_door"].move_s == 2.0
        with pytest.raises(ConfigError, match="unknown door 'main_dor': did you mean 'main_door'"):
            doors.open("main_dor")
        doors.open("main_door", "script")
        sim.run_simulation(duration=1.0)
        assert doors["main_door"].mode is DoorMode.OPENING and not doors.is_open("main_door")
        sim.run_simulation(duration=1.2)
        assert doors.is_open("main_door")
        doors.close("main_door", "script")
        sim.run_simulation(duration=2.2)
        assert doors["main_door"].mode is DoorMode.CLOSED
        assert seen == [("main_door", m) for m in ("opening", "open", "closing", "closed")]
        assert doors.kpis()["door_cycles"] == 1
        assert doors.kpis()["door_open_s"] == pytest.approx(4.0, abs=0.25)
        # driven straight at the closed door, a robot hits it; once the door is open, it passes
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(3, 0, 0.25))
        robot = Agent.from_params(cube, sim)
        robot.set_goal(Pose.from_xyz(9, 0, 0.25))
        sim.run_simulation(duration=8.0)
        assert sim.collision_counts.get("robot-structure", 0) >= 1
        hits = sim.collision_counts.get("robot-structure", 0)
        robot.set_pose(Pose.from_xyz(3, 0, 0.25))
        doors.open("main_door")
        sim.run_simulation(duration=2.5)
        robot.set_goal(Pose.from_xyz(9, 0, 0.25))
        sim.run_simulation(duration=8.0)
        assert robot.get_pose().x == pytest.approx(9.0, abs=0.1)
        assert sim.collision_counts.get("robot-structure", 0) == hits  # nothing more touched
    with fleetsim.recording.open(recording) as read:
        told = [(e["door"], e["mode"]) for e in read.events() if e["kind"] == "door"]
    assert told == seen and seen[4:] == [("main_door", "opening"), ("main_door", "open")]


def write_scenario(folder: Path, house: Path) -> Path:
    tasks = [
        {
            "id": f"t{k}",
            "pickup": "west" if k % 2 == 0 else "east",
            "dropoff": "east" if k % 2 == 0 else "west",
            "release_time": 5 * k,
        }
        for k in range(6)
    ]
    path = folder / "doors.yaml"
    lines = [
        "simulation: {timestep: 0.1, target_rtf: 0, duration: 400, seed: 3}",
        f"site: {{file: {house.name}}}",
        "robots:",
        "  - {name: amr, model: mobile_robot, start: {random: 2, at: parking_spot}}",
        "plugins:",
        "  - type: fleet_manager",
        "    params:",
        "      pick_time: 1",
        "      drop_time: 1",
        f"      tasks: {{list: {tasks}}}",
    ]
    path.write_text("\n".join(lines).replace("'", '"') + "\n")
    return path


def test_the_fleet_manager_opens_waits_for_and_closes_the_door(house: Path) -> None:
    built = build(load_scenario(write_scenario(house.parent, house)))
    sim = built.sim
    inside_closed = []
    door = None

    def watch(*_: object) -> None:
        """The oracle: no robot's footprint overlaps the door's opening unless it is open."""
        if door.mode is DoorMode.OPEN:
            return
        for robot in built.scene.robots:
            x, y = robot.get_pose().position[:2]
            if abs(x - 6.0) < 0.45 and abs(y) < 1.0:
                inside_closed.append((sim.sim_time, robot.name, door.mode.value))

    with sim:
        door = sim.doors["main_door"]
        sim.register_callback(watch)
        sim.run_simulation()
        manager = built.plugins[0].manager  # type: ignore[attr-defined]
        kpis = manager.kpis()
        assert kpis["tasks_completed"] == 6 and kpis["tasks_failed"] == 0
        assert inside_closed == []
        assert kpis["door_cycles"] >= 1 and kpis["door_waits"] >= 1 and kpis["door_wait_s"] > 0
        assert kpis["door_open_s"] > 0
        assert sum(kpis["collisions"].values()) == 0
        assert door.mode is DoorMode.CLOSED and not door.wanted_by  # let go once all passed
    assert np.isfinite(kpis["door_open_s"])


def test_go_to_asks_for_the_door_waits_and_lets_it_go(house: Path) -> None:
    with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
        sim.set_site(Site.from_building(house))
        door = sim.doors["main_door"]
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(0, 0, 0.25))
        robot = Agent.from_params(cube, sim)
        inside_closed: list[float] = []

        def watch(*_: object) -> None:
            x, y = robot.get_pose().position[:2]
            if door.mode is not DoorMode.OPEN and abs(x - 6.0) < 0.4 and abs(y) < 1.0:
                inside_closed.append(sim.sim_time)

        sim.register_callback(watch)
        action = robot.go_to("east")
        sim.run_simulation(duration=40.0)
        assert action.status.value == "completed"
        assert robot.get_pose().x == pytest.approx(12.0, abs=0.1)
        assert inside_closed == [] and sim.collision_counts.get("robot-structure", 0) == 0
        assert door.cycles == 1 and door.mode is DoorMode.CLOSED and not door.wanted_by
