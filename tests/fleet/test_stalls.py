"""No silent stall: the depot where the fleet manager used to livelock finishes every order;
a deadlock that lasts is one unresolved episode; a robot whose task stops advancing is a
stall, reported in the KPIs, the summary, the results tables, the recording and `--fail-on`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fleetsim.fleet import FleetManager, Task
from fleetsim.recording import open as open_recording
from fleetsim.site import Site

from ..conftest import fleetsim, make_sim
from .helpers import fleet_of

DEPOT = Path(__file__).parent / "cases" / "depot"


def test_the_depot_finishes_every_order(tmp_path: Path) -> None:
    """A 4 x 7 lattice with two parking rows, 10 robots, 24 orders, greedy assignment: the
    same swap between two robots used to be "resolved" 330 times while two tasks never
    finished (22 of 24 after an hour)."""
    for name in ("depot.yaml", "orders.csv"):
        shutil.copy(DEPOT / name, tmp_path / name)
    out = tmp_path / "results.json"
    done = fleetsim(
        "run",
        str(tmp_path / "depot.yaml"),
        "--duration",
        "900",
        "--output",
        str(out),
        "--fail-on",
        "stalls,collisions",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    kpis = json.loads(out.read_text())["kpis"]
    assert kpis["tasks_completed"] == kpis["tasks_released"] == 24
    assert kpis["stalls"] == 0 and kpis["deadlocks_unresolved"] == 0
    assert kpis["deadlocks"] <= 20  # episodes, each undone once and for all


CORRIDOR = (
    [{"name": f"n{k}", "x": 3.0 * k, "y": 0.0} for k in range(5)],
    [{"from": f"n{k}", "to": f"n{k + 1}"} for k in range(4)],
)


class InOrder:
    """Task k to robot k: the two robots must pass each other."""

    def assign(self, fleet: Any, idle: list[int], tasks: list[Task]) -> list[tuple[int, Task]]:
        return [(i, t) for i, t in zip(idle, tasks, strict=False) if t.id.endswith(str(i))]


def test_a_deadlock_without_a_way_out_is_one_unresolved_episode_and_a_stall() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*CORRIDOR))
        robots = fleet_of(sim, "n0", "n4")
        tasks = [Task("east0", ("n4", "n3")), Task("west1", ("n0", "n1"))]
        manager = FleetManager(
            sim, robots, tasks, assignment=InOrder(), park=False, max_active=2, stall_after_s=10.0
        ).attach()
        for _ in range(400):  # 40 s
            sim.step_once()
        # one episode, however often it came back (a robot stepping aside and back again)
        (episode,) = manager.traffic.deadlocks
        assert not episode.resolved and set(episode.robots) == {"amr0", "amr1"}
        stalls = manager.stalls.records
        assert sorted(s.robot for s in stalls) == ["amr0", "amr1"]  # driving to and fro: no
        east = next(s for s in stalls if s.robot == "amr0")  # progress towards its place
        assert east.task == "east0" and east.ended is None and east.time == east.since + 10.0
        west = next(s for s in stalls if s.robot == "amr1")
        assert west.task == "west1" and west.node == "n4" and west.ended is None
        assert west.waits_for is not None and "held by amr0" in west.waits_for
        kpis = manager.kpis()
        assert kpis["stalls"] == 2 and kpis["stalled_now"] == 2
        assert kpis["deadlocks"] == 1 and kpis["deadlocks_unresolved"] == 1
        assert [r["robot"] for r in manager.tables()["stalls"]] == [s.robot for s in stalls]


def test_a_queue_that_moves_is_not_a_stall() -> None:
    """Robots queued behind one that is working wait longer than the stall time, but the
    robot ahead progresses: no stall."""
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*CORRIDOR))
        robots = fleet_of(sim, "n0", "n1")
        tasks = [Task("far", ("n4", "n3")), Task("next", ("n4", "n3"), release_time=1.0)]
        manager = FleetManager(
            sim, robots, tasks, park=False, pick_time=12.0, drop_time=12.0, stall_after_s=8.0
        ).attach()
        for _ in range(1200):
            sim.step_once()
            if all(t.status.value == "done" for t in manager.tasks) and len(manager.tasks) == 2:
                break
        assert [t.status.value for t in manager.tasks] == ["done", "done"]
        assert manager.stalls.records == []


def test_stalls_in_the_summary_the_recording_and_fail_on(tmp_path: Path) -> None:
    scenario = {
        "simulation": {"timestep": 0.1, "duration": 40, "target_rtf": 0},
        "site": {"graph": {"nodes": CORRIDOR[0], "lanes": CORRIDOR[1]}},
        "robots": [{"name": "amr", "model": "mobile_robot", "start": ["n0", "n4"]}],
        "plugins": [
            {
                "type": "fleet_manager",
                "params": {
                    "tasks": {
                        "list": [
                            {"id": "east0", "pickup": "n4", "dropoff": "n3"},
                            {"id": "west1", "pickup": "n0", "dropoff": "n1"},
                        ]
                    },
                    "assignment": "in_order:InOrder",
                    "max_active": 2,
                    "stall_after_s": 10,
                },
            }
        ],
    }
    (tmp_path / "in_order.py").write_text(
        "class InOrder:\n"
        "    def assign(self, fleet, idle, tasks):\n"
        "        return [(i, t) for i, t in zip(idle, tasks) if t.id.endswith(str(i))]\n"
    )
    path = tmp_path / "stuck.yaml"
    path.write_text(json.dumps(scenario))
    record, out = tmp_path / "stuck.mcap", tmp_path / "stuck.json"
    done = fleetsim(
        "run", str(path), "--record", str(record), "--output", str(out), "--fail-on", "stalls"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "--fail-on: 2 stalls (2 still stalled)" in done.stderr
    assert "stalls" in done.stdout and "2 (2 still stalled" in done.stdout
    results = json.loads(out.read_text())
    assert results["kpis"]["stalls"] == 2 and len(results["stalls"]) == 2
    with open_recording(record) as rec:
        events = [e for e in rec.events() if e["kind"] == "stall"]
    assert sorted(e["robot"] for e in events) == ["amr_0", "amr_1"]
    assert all(e["task"] and e["node"] in ("n0", "n1", "n2", "n3", "n4") for e in events)
    assert any(e["waits_for"] for e in events)


LOOP = (  # one way round: from a, the way to e (2 m east) goes 20 m west first
    [
        {"name": "a", "x": 0.0, "y": 0.0},
        {"name": "b", "x": -20.0, "y": 0.0},
        {"name": "c", "x": -20.0, "y": 8.0},
        {"name": "d", "x": 2.0, "y": 8.0},
        {"name": "e", "x": 2.0, "y": 0.0},
    ],
    [
        {"from": u, "to": v, "bidirectional": False}
        for u, v in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a"))
    ],
)


def test_a_long_way_round_is_progress() -> None:
    """Progress is the way left along the route, not the distance as the crow flies: a robot
    that must drive 20 m away from its place first (longer than the stall time) is not
    stalled."""
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*LOOP))
        robots = fleet_of(sim, "a")
        manager = FleetManager(
            sim, robots, [Task("round", ("e", "a"))], park=False, stall_after_s=8.0
        ).attach()
        for _ in range(1200):
            sim.step_once()
            if manager.tasks[0].status.value == "done":
                break
        assert manager.tasks[0].status.value == "done" and sim.sim_time > 40
        assert manager.stalls.records == []


def test_a_robot_stopped_by_a_fault_is_not_stalled_but_one_held_behind_it_is() -> None:
    """The time a robot is broken down does not count towards its own stall (the fault is in
    the faults table); a robot queued behind it, which the fleet could have sent round, is
    stalled, held by it."""
    from fleetsim.faults import FaultEvent, FaultInjector, FaultPlan

    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*CORRIDOR))
        robots = fleet_of(sim, "n1", "n0")
        tasks = [Task("first", ("n3", "n4")), Task("second", ("n2", "n1"))]
        manager = FleetManager(
            sim, robots, tasks, park=False, max_active=2, stall_after_s=8.0
        ).attach()
        plan = FaultPlan(events=(FaultEvent(1.0, "breakdown", "amr0", duration=25.0),))
        FaultInjector(sim, robots, plan).attach()
        for _ in range(300):  # 30 s: amr0 broken down from 1 s to 26 s
            sim.step_once()
        (stall,) = manager.stalls.records
        assert stall.robot == "amr1" and stall.waits_for is not None
        assert "held by amr0" in stall.waits_for
        for _ in range(900):
            sim.step_once()
        assert [t.status.value for t in manager.tasks] == ["done", "done"]
        assert [s.robot for s in manager.stalls.records] == ["amr1"]
        assert stall.ended is not None and stall.ended > 26.0
