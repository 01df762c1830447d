"""Lifts as devices and fleets across floors: the cabin moves at its speed with its doors,
serves requests by its policy, carries the robots aboard, and the fleet manager's robots ride
it to orders on other floors, never on two floors at once, never more aboard than fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetsim import ConfigError, MultiRobotSimulationCore, SimulationParams
from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.devices import DoorMode
from fleetsim.geometry import Pose
from fleetsim.scenario import build, load_scenario
from fleetsim.site import Site

from .buildings import ELEVATIONS, TOWER, write_scenario


@pytest.fixture
def tower(tmp_path: Path) -> Path:
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    return path


def test_the_cabin_moves_in_its_time_and_carries_who_is_aboard(tower: Path) -> None:
    with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
        site = Site.from_building(tower)
        sim.set_site(site)
        lifts = sim.lifts
        lift = lifts["Lift1"]
        assert lift.levels == ["L1", "L2", "L3"] and lift.level == "L1" and lift.capacity == 2
        with pytest.raises(ConfigError, match="unknown lift 'Lift2': did you mean 'Lift1'"):
            lifts.request("Lift2", "me", "L2")
        with pytest.raises(ConfigError, match="does not serve level 'L9'"):
            lifts.request("Lift1", "me", "L9")
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(8, 0, 0.0))
        robot = Agent.from_params(cube, sim)
        lifts.request("Lift1", "me", "L1")
        sim.run_simulation(duration=2.1)  # the doors open in 2 s: it is already at L1
        assert lift.ready("L1", "me") and lift.door is DoorMode.OPEN
        assert lifts.board("Lift1", "me", robot)
        lifts.request("Lift1", "me", "L3")
        sim.run_simulation(duration=2.1 + 4.0)  # doors close (2 s), then 4 of the 8 m up
        assert lift.door is DoorMode.CLOSED and lift.z == pytest.approx(4.0, abs=0.15)
        assert robot.get_pose().z == pytest.approx(lift.z)  # carried
        sim.run_simulation(duration=4.0 + 2.5)
        assert lift.ready("L3", "me") and robot.get_pose().z == pytest.approx(8.0)
        lifts.release("Lift1", "me")
        assert lifts.kpis()["lift_trips"] == 1


def test_requests_are_served_by_the_policy(tower: Path) -> None:
    for policy, first in (("fifo", "far"), ("nearest", "near")):
        with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
            site = Site.from_building(tower)
            sim.set_site(site)
            from fleetsim.devices import Lifts

            sim.lifts = lifts = Lifts(sim, site, policy=policy)
            lifts.request("Lift1", "holder", "L2")  # the cabin goes to L2 for a first session
            sim.run_simulation(duration=8.0)
            lifts.request("Lift1", "far", "L3")  # then: L3 asked first, L1 ... no, L2 nearer
            lifts.request("Lift1", "near", "L2")
            lifts.release("Lift1", "holder")
            sim.run_simulation(duration=0.2)
            assert lifts["Lift1"].session == first, policy


def test_a_fleet_serves_orders_across_floors_by_lift(tower: Path) -> None:
    built = build(load_scenario(write_scenario(tower)))
    sim = built.sim
    wrong: list[tuple[float, str, float]] = []
    most_aboard = [0]

    def watch(*_: object) -> None:
        """The oracles: each robot is on a floor, or aboard the cabin at its height; the
        cabin never holds more than its capacity."""
        lift = sim.lifts["Lift1"]
        most_aboard[0] = max(most_aboard[0], len(lift.aboard))
        riding = {robot.name for robot in lift.aboard.values()}
        for robot in built.scene.robots:
            z = robot.get_pose().z
            on_floor = any(abs(z - e) < 1e-6 for e in ELEVATIONS.values())
            if not on_floor and not (robot.name in riding and abs(z - lift.z) < 1e-6):
                wrong.append((sim.sim_time, robot.name, z))

    with sim:
        sim.register_callback(watch)
        sim.run_simulation()
        manager = built.plugins[0].manager  # type: ignore[attr-defined]
        kpis = manager.kpis()
        assert kpis["tasks_completed"] == 4 and kpis["tasks_failed"] == 0, kpis
        assert wrong == [] and most_aboard[0] <= sim.lifts["Lift1"].capacity
        assert kpis["lift_rides"] >= 4 and kpis["lift_trips"] >= 4
        assert sum(kpis["collisions"].values()) == 0 and kpis["stalls"] == 0


def test_go_to_another_floor_says_it_needs_the_fleet_manager(tower: Path) -> None:
    with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
        sim.set_site(Site.from_building(tower))
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(0, 0, 0.0))
        robot = Agent.from_params(cube, sim)
        action = robot.go_to("lab")  # on L3
        sim.run_simulation(duration=0.5)
        assert action.status.value == "failed" and "changes floor by lift" in action.error_message
        assert robot.go_to("hall_L1") is not None
