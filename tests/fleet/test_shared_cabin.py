"""A cabin with room for two robots carries two robots going the same way in one trip: the
robot next in line at the entry joins the session of the robot entering, each stands on its
own spot in the cabin, and they never touch; a cabin with room for one carries them in turn.
Checked with oracles of our own every step (heights, spots, gaps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fleetsim import Agent, Pose
from fleetsim.fleet.traffic import TrafficControl
from fleetsim.scenario import build, load_scenario
from fleetsim.site import Site

from ..conftest import make_sim

ELEVATIONS = {"L1": 0.0, "L2": 4.0}


def level(name: str) -> str:
    """A corridor into the lift (at x = 12) through its hall (x = 8), two places behind."""
    return f"""
  {name}:
    elevation: {ELEVATIONS[name]}
    vertices:
      - [0, 0, 0, far_{name}]
      - [4, 0, 0, near_{name}]
      - [8, 0, 0, hall_{name}]
      - [12, 0, 0, lift_{name}]
      - [4, 4, 0, side_{name}]
    lanes:
      - [0, 1, {{bidirectional: [4, true]}}]
      - [1, 2, {{bidirectional: [4, true]}}]
      - [2, 3, {{bidirectional: [4, true]}}]
      - [1, 4, {{bidirectional: [4, true]}}]
"""


def building(folder: Path, width: float) -> Path:
    path = folder / "two.building.yaml"
    path.write_text(
        "coordinate_system: cartesian_meters\nname: two\nlevels:"
        + "".join(level(n) for n in ELEVATIONS)
        + f"""
lifts:
  Lift1:
    x: 12
    y: 0
    yaw: 0
    width: 2.0
    depth: {width}
    level_doors: {{L1: [d], L2: [d]}}
    doors: {{d: {{door_type: 2, x: -1, y: 0, motion_axis_orientation: 1.57, width: 1.2}}}}
"""
    )
    return path


def ride_two(tmp_path: Path, depth: float, goals: tuple[str, str]) -> dict[str, Any]:
    """Two robots on L1 (one at the place before the hall, one behind it) sent to L2 at once;
    what the lift and the oracles saw."""
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(building(tmp_path, depth)))
        robots = [
            Agent.from_urdf(
                "mobile_robot",
                Pose.from_yaw(x, 0, 0, 0),
                sim_core=sim,
                name=f"r{k}",
                motion_mode="differential",
                max_linear_vel=1.0,
            )
            for k, x in enumerate((4.0, 0.0))
        ]
        traffic = TrafficControl(sim, robots)
        arrived: list[int] = []
        traffic.on_arrival = arrived.append
        for i, goal in enumerate(goals):
            traffic.send(i, goal)
        lift = sim.lifts["Lift1"]
        most_aboard, closest, wrong = 0, np.inf, []
        for _ in range(3000):
            sim.step_once()
            traffic.step()
            xyz = np.array([r.get_pose().position for r in robots])
            most_aboard = max(most_aboard, len(lift.aboard))
            closest = min(closest, float(np.linalg.norm(xyz[0] - xyz[1])))
            riding = {r.name for r in lift.aboard.values()}
            for robot, z in zip(robots, xyz[:, 2], strict=True):
                on_floor = any(abs(z - e) < 1e-6 for e in ELEVATIONS.values())
                if not on_floor and not (robot.name in riding and abs(z - lift.z) < 1e-6):
                    wrong.append(f"{sim.sim_time:.1f}: {robot.name} at z {z}")
            if sorted(arrived) == [0, 1]:
                break
        return {
            "arrived": sorted(arrived),
            "wrong": wrong,
            "most_aboard": most_aboard,
            "closest": closest,
            "trips": sim.lifts.kpis()["lift_trips"],
            "collisions": sim.collision_counts["robot-robot"],
            "final": [list(r.get_pose().position[:2]) for r in robots],
        }


def test_a_cabin_for_two_carries_both_robots_in_one_trip(tmp_path: Path) -> None:
    seen = ride_two(tmp_path, depth=2.4, goals=("side_L2", "far_L2"))
    assert seen["arrived"] == [0, 1] and seen["wrong"] == [], seen
    assert seen["most_aboard"] == 2 and seen["trips"] == 1, seen  # both rode together
    assert seen["collisions"] == 0 and seen["closest"] > 2 * 0.36  # apart in the cabin too
    assert np.allclose(seen["final"], [[4, 4], [0, 0]], atol=0.06)


def test_a_cabin_for_one_carries_them_in_turn(tmp_path: Path) -> None:
    """The control: a cabin 2 m deep has room for one of these robots at a time."""
    seen = ride_two(tmp_path, depth=2.0, goals=("side_L2", "far_L2"))
    assert seen["arrived"] == [0, 1] and seen["wrong"] == [], seen
    assert seen["most_aboard"] == 1 and seen["trips"] == 3 and seen["collisions"] == 0, seen


@pytest.mark.parametrize("depth", [2.4, 2.0])
def test_the_fleet_manager_sends_two_robots_up_in_one_trip(tmp_path: Path, depth: float) -> None:
    """Two orders on the upper floor released at once: the fleet manager's two robots ride up
    together (in turn, in a cabin for one), and every KPI says what happened (both tasks done,
    no stall, no collision). The lift is at the end of a corridor with one way in: a robot
    coming down meets the robot waiting to go up, or driving out, and one of them backs off
    far enough (a deadlock found and undone, not a freeze)."""
    path = building(tmp_path, depth)
    path.write_text(
        path.read_text()
        .replace("[4, 4, 0, side_L2]", "[4, 4, 0, side_L2, {pickup_dispenser: [1, a]}]")
        .replace("[4, 4, 0, side_L1]", "[4, 4, 0, side_L1, {dropoff_ingestor: [1, b]}]")
    )
    tasks = [
        {"id": f"t{k}", "pickup": "side_L2", "dropoff": "side_L1", "release_time": 0}
        for k in range(2)
    ]
    scenario = tmp_path / "up.yaml"
    scenario.write_text(f"""
simulation: {{timestep: 0.1, target_rtf: 0, duration: 300, seed: 1}}
site: {{file: {path.name}}}
robots:
  - {{name: amr, model: mobile_robot, start: [near_L1, far_L1]}}
plugins:
  - type: fleet_manager
    params: {{pick_time: 5, drop_time: 5, tasks: {{list: {json.dumps(tasks)}}}}}
""")
    built = build(load_scenario(scenario))
    sim = built.sim
    most = [0]
    with sim:
        lift = sim.lifts["Lift1"]
        sim.register_callback(lambda *_: most.__setitem__(0, max(most[0], len(lift.aboard))))
        sim.run_simulation()
        kpis = built.plugins[0].manager.kpis()  # type: ignore[attr-defined]
    assert most[0] == (2 if depth > 2.1 else 1)
    assert kpis["tasks_completed"] == 2 and kpis["stalls"] == 0, kpis
    assert kpis["deadlocks_unresolved"] == 0 and sim.collision_counts["robot-robot"] == 0
    assert kpis["lift_rides"] == 4  # up and down, each robot
