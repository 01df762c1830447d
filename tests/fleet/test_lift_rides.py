"""Fleets that ride lifts never freeze unseen: a lift is called only from its entry, a robot
waiting for a lift waits for whoever holds it (an edge of the wait-for graph, so a cycle
through a lift is a deadlock undone like any other), and a lift held still is a stall naming
the lift and its holder. Checked against oracles of our own, every step."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from fleetsim.scenario import build, load_scenario

from ..site.buildings import TOWER, write_scenario

ELEVATIONS = {"L1": 0.0, "L2": 4.0, "L3": 8.0}


def level(name: str, short: bool = False) -> str:
    """A corridor on each level between two lifts (LiftB at x = -4, LiftA at x = 12), with a
    place at x = 4 and two parking spots: the lifts' only way in is through their entries.
    `short`: two more nodes between the place and LiftA's hall (lanes of 1.33 m, shorter than
    a robot's look-ahead: it holds the hall while still two lanes away)."""
    mids = (
        f"      - [5.333, 0, 0, mid1_{name}]\n      - [6.667, 0, 0, mid2_{name}]\n" if short else ""
    )
    to_hall = (
        "      - [1, 7, {bidirectional: [4, true]}]\n"
        "      - [7, 8, {bidirectional: [4, true]}]\n"
        "      - [8, 2, {bidirectional: [4, true]}]\n"
        if short
        else "      - [1, 2, {bidirectional: [4, true]}]\n"
    )
    return f"""
  {name}:
    elevation: {ELEVATIONS[name]}
    vertices:
      - [0, 3, 0, park_{name}, {{is_parking_spot: [4, true]}}]
      - [4, 0, 0, place_{name}, {{pickup_dispenser: [1, a], dropoff_ingestor: [1, b]}}]
      - [8, 0, 0, hall_{name}]
      - [12, 0, 0, liftA_{name}]
      - [4, 3, 0, park2_{name}, {{is_parking_spot: [4, true]}}]
      - [0, 0, 0, west_{name}]
      - [-4, 0, 0, liftB_{name}]
{mids}    lanes:
      - [0, 5, {{bidirectional: [4, true]}}]
      - [5, 1, {{bidirectional: [4, true]}}]
{to_hall}      - [2, 3, {{bidirectional: [4, true]}}]
      - [4, 1, {{bidirectional: [4, true]}}]
      - [5, 6, {{bidirectional: [4, true]}}]
"""


def lift(name: str, x: float) -> str:
    return f"""  {name}:
    x: {x}
    y: 0
    yaw: 0
    width: 2.0
    depth: 2.0
    level_doors: {{L1: [d], L2: [d], L3: [d]}}
    doors: {{d: {{door_type: 2, x: -1, y: 0, motion_axis_orientation: 1.57, width: 1.2}}}}
"""


def two_lift_tower(folder: Path, seed: int, orders: int, short: bool = False) -> Path:
    """Three levels, two lifts, three robots; one cross-floor order a minute."""
    (folder / "tower2.building.yaml").write_text(
        "coordinate_system: cartesian_meters\nname: tower2\nlevels:"
        + "".join(level(n, short) for n in ELEVATIONS)
        + "\nlifts:\n"
        + lift("LiftA", 12)
        + lift("LiftB", -4)
    )
    pick = random.Random(seed)
    tasks = []
    for k in range(orders):
        a, b = pick.sample(list(ELEVATIONS), 2)
        tasks.append(
            {"id": f"t{k}", "pickup": f"place_{a}", "dropoff": f"place_{b}", "release_time": 60 * k}
        )
    path = folder / "freeze.yaml"
    path.write_text(f"""
simulation: {{timestep: 0.1, target_rtf: 0, duration: {60 * orders + 240}, seed: 1}}
site: {{file: tower2.building.yaml}}
robots:
  - {{name: amr, model: mobile_robot, start: [park_L1, park_L2, park2_L3]}}
plugins:
  - type: fleet_manager
    params:
      pick_time: 5
      drop_time: 5
      tasks: {{list: {json.dumps(tasks)}}}
""")
    return path


@pytest.mark.parametrize("seed", [1, 2])
def test_three_robots_and_two_lifts_serve_every_order_and_never_freeze(
    tmp_path: Path, seed: int
) -> None:
    built = build(load_scenario(two_lift_tower(tmp_path, seed, orders=15)))
    sim = built.sim
    manager = built.plugins[0].manager  # type: ignore[attr-defined]
    traffic, robots = manager.traffic, built.scene.robots
    floors = np.array(list(ELEVATIONS.values()))
    wrong: list[str] = []

    def watch(*_: object) -> None:
        """On a floor or aboard a cabin at its height; a robot waiting for a lift held by
        a fleet robot waits for that robot in the wait-for graph."""
        riding = {r.name: lift.z for lift in sim.lifts.lifts.values() for r in lift.aboard.values()}
        for i, robot in enumerate(robots):
            z = robot.get_pose().z
            if not np.any(np.abs(floors - z) < 1e-6) and abs(riding.get(robot.name, -9) - z) > 1e-6:
                wrong.append(f"{sim.sim_time:.1f}: {robot.name} at z {z}")
            ride = sim.lifts.rides.riding(f"robot:{robot.name}")
            node = int(traffic.waiting_on[i])
            if ride is None or ride.phase != "called" or node not in traffic.lift_rides.stops:
                continue
            device = sim.lifts[ride.lift]
            holders = [
                k
                for k, r in enumerate(robots)
                if f"robot:{r.name}" in (device.session, *device.guests) and k != i
            ]
            if holders and traffic.waits_for(i) not in holders:
                wrong.append(
                    f"{sim.sim_time:.1f}: {robot.name} waits for {ride.lift}, "
                    f"held by {holders}, but waits_for says {traffic.waits_for(i)}"
                )

    with sim:
        sim.register_callback(watch)
        sim.run_simulation()
        kpis = manager.kpis()
    assert wrong == [], wrong[:5]
    assert kpis["tasks_completed"] == kpis["tasks_released"] == 15, (seed, kpis)
    assert sum(kpis["collisions"].values()) == 0, kpis["collisions"]
    assert kpis["stalls"] == 0 and kpis["deadlocks_unresolved"] == 0, kpis
    assert kpis["lift_rides"] >= 15


def test_a_lift_is_called_only_from_its_entry(tmp_path: Path) -> None:
    """A robot asks for a lift only from the lift's entry on its level (the node before the
    cabin: hall_* for LiftA, west_* for LiftB): holding it, on the last lane into it or on it,
    never from farther away (with lanes shorter than its look-ahead it holds the entry while
    still two lanes away: it must not call from there); or from inside the cabin (a robot
    sent elsewhere while it waited there to drive out)."""
    built = build(load_scenario(two_lift_tower(tmp_path, 3, orders=8, short=True)))
    sim = built.sim
    traffic = built.plugins[0].manager.traffic  # type: ignore[attr-defined]
    graph = traffic.graph
    entry = {"LiftA": "hall", "LiftB": "west"}
    last_lane = {"LiftA": 1.34, "LiftB": 4.0}  # the longest lane into each lift's entry
    riding: dict[str, bool] = {}
    far: list[str] = []
    calls = [0]

    def watch(*_: object) -> None:
        for i, robot in enumerate(built.scene.robots):
            rider = f"robot:{robot.name}"
            ride = sim.lifts.rides.riding(rider)
            if ride is not None and not riding.get(rider):  # a new call
                calls[0] += 1
                node = graph.node(f"{entry[ride.lift]}_{ride.start}")
                cabin = graph.node(f"{ride.lift[:4].lower()}{ride.lift[4:]}_{ride.start}")
                x, y, _ = robot.get_pose().position
                away = float(np.hypot(x - graph.xs[node], y - graph.ys[node]))
                inside = float(np.hypot(x - graph.xs[cabin], y - graph.ys[cabin])) < 0.05
                if not inside and (traffic.owner[node] != i or away > last_lane[ride.lift] + 0.05):
                    far.append(
                        f"{sim.sim_time:.1f}: {robot.name} called {ride.lift} "
                        f"{away:.2f} m from its entry"
                    )
            riding[rider] = ride is not None

    with sim:
        sim.on("pre_step", watch)  # (before the lifts' step turns a call into a session)
        sim.run_simulation()
    assert calls[0] >= 8 and far == [], far[:3]


def test_a_lift_held_still_by_another_is_a_stall_naming_it_and_its_holder(tmp_path: Path) -> None:
    tower = tmp_path / "tower.building.yaml"
    tower.write_text(TOWER)
    text = (
        write_scenario(tower)
        .read_text()
        .replace("pick_time: 1", "pick_time: 1\n      stall_after_s: 30")
    )
    path = tmp_path / "held.yaml"
    path.write_text(text.replace("duration: 900", "duration: 240"))
    built = build(load_scenario(path))
    sim = built.sim
    with sim:
        sim.lifts.request("Lift1", "outsider", "L2")  # an outside session, never ended
        sim.run_simulation()
        manager = built.plugins[0].manager  # type: ignore[attr-defined]
        kpis = manager.kpis()
        stalls = manager.stalls.stalled
    assert kpis["stalls"] >= 1 and kpis["tasks_completed"] == 0
    assert any(
        "lift Lift1" in (s.waits_for or "") and "held by outsider" in (s.waits_for or "")
        for s in stalls
    ), [s.waits_for for s in stalls]
