"""The reference fleet manager: tasks released, assigned, driven under traffic control and
worked; robot states and KPIs that add up; replaceable assignment; bad tasks named."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, FleetSimError, MultiRobotSimulationCore, Pose, SimObject
from fleetsim.fleet import (
    STATES,
    BatteryParams,
    FleetManager,
    NearMisses,
    RobotState,
    Task,
    TaskStatus,
    poisson_tasks,
    task_list,
    tasks_from_file,
)
from fleetsim.site import Obstacles, Site

from ..conftest import make_sim
from .helpers import fleet_of


def grid_site(
    cols: int = 6, rows: int = 4, spacing: float = 3.0, chargers: tuple[str, ...] = ()
) -> Site:
    """A lattice with pick-up stations on the bottom row and drop-offs on the top row."""
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    nodes = [
        {
            "name": f"n{r}_{c}",
            "x": spacing * c,
            "y": spacing * r,
            "pickup": r == 0,
            "dropoff": r == rows - 1,
            "charger": f"n{r}_{c}" in chargers,
        }
        for r, c in cells
    ]
    lanes = [{"from": f"n{r}_{c}", "to": f"n{r}_{c + 1}"} for r, c in cells if c < cols - 1]
    lanes += [{"from": f"n{r}_{c}", "to": f"n{r + 1}_{c}"} for r, c in cells if r < rows - 1]
    return Site.from_graph(nodes, lanes)


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        s.set_site(grid_site())
        yield s


def run_until_done(
    sim: MultiRobotSimulationCore, manager: FleetManager, tasks: int, steps: int = 6000
) -> None:
    manager.attach()
    for _ in range(steps):
        sim.step_once()
        finished = [t for t in manager.tasks if t.status in (TaskStatus.DONE, TaskStatus.FAILED)]
        if len(finished) == tasks:
            return
    raise AssertionError(f"{manager.kpis()}")


def deliveries(count: int, spread: float = 4.0) -> list[Task]:
    return [
        Task(f"t{k}", (f"n0_{k % 6}", f"n3_{(k * 5 + 2) % 6}"), release_time=k * spread)
        for k in range(count)
    ]


def test_deliveries_are_done_without_collisions(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0", "n1_2", "n1_4", "n2_1")
    manager = FleetManager(sim, robots, deliveries(12), pick_time=3, drop_time=2)
    run_until_done(sim, manager, 12)
    k = manager.kpis()
    assert k["tasks_completed"] == 12 and k["tasks_failed"] == 0
    assert k["collisions"]["robot-robot"] == 0 and k["collisions"]["robot-structure"] == 0
    for task in manager.tasks:  # the life cycle in order, and the work times were kept
        t = task.times
        assert t["released"] <= t["assigned"] <= t["started"] < t["done"]
        assert t["done"] - t["started"] >= 3 + 2 - 1e-9 and task.robot in {r.name for r in robots}
    cycle = k["cycle_time_s"]
    assert 0 < cycle["p50"] <= cycle["p95"] <= cycle["max"] and cycle["mean"] > 5
    queue, service = k["queue_time_s"], k["service_time_s"]  # waiting for a robot, then its work
    assert queue["mean"] + service["mean"] == pytest.approx(cycle["mean"])
    assert queue["max"] > 0 and service["p50"] >= 5  # 12 orders for 4 robots: some queued
    assert k["throughput_per_hour"] == pytest.approx(12 / sim.sim_time * 3600)
    # Every robot's states add up to the time simulated; work and driving were counted.
    assert manager.time_in_state.sum(axis=1) == pytest.approx(np.full(4, sim.sim_time), abs=0.11)
    assert k["time_in_state_s"]["working"] >= 12 * 5 - 1 and k["time_in_state_s"]["moving"] > 0
    assert 0 < k["utilisation"] <= 1 and k["distance_m"] > 12 * 9
    assert (manager.state == RobotState.IDLE).all()


def test_a_custom_assignment_policy(sim: MultiRobotSimulationCore) -> None:
    class FirstRobotOnly:
        """Everything to robot 0, one task at a time (a policy in a few lines)."""

        def assign(self, fleet, idle, tasks):  # type: ignore[no-untyped-def]
            return [(0, tasks[0])] if 0 in idle else []

    robots = fleet_of(sim, "n1_0", "n1_4")
    manager = FleetManager(sim, robots, deliveries(3, spread=0.0), assignment=FirstRobotOnly())
    run_until_done(sim, manager, 3)
    assert {t.robot for t in manager.tasks} == {"amr0"}
    assert manager.kpis()["tasks_completed"] == 3
    assert manager.time_in_state[1, RobotState.IDLE] == pytest.approx(sim.sim_time, abs=0.11)


def test_a_policy_that_raises_is_named(sim: MultiRobotSimulationCore) -> None:
    class Broken:
        def assign(self, fleet: FleetManager, idle: list[int], tasks: list[Task]) -> list:
            return [tasks[5]]  # a bug in the policy

    manager = FleetManager(sim, fleet_of(sim, "n1_0"), deliveries(1), assignment=Broken())
    with pytest.raises(
        FleetSimError,
        match=r"policy Broken raised at t=0\.0 s \(1 idle robots, "
        r"1 tasks waiting\): IndexError: list index out of range",
    ):
        manager.step()


def test_greedy_matches_the_closest_pairs(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n0_0", "n0_5")
    tasks = [Task("far", ("n0_1", "n3_1")), Task("near", ("n0_4", "n3_4"))]
    nearest = FleetManager(sim, robots, [], assignment="nearest")
    greedy = FleetManager(sim, robots, [], assignment="greedy", traffic=nearest.traffic)
    # In order, "nearest" gives the first task to robot 0 (1 cell away) and the other to
    # robot 1; greedy takes the globally closest pair first: the same here, then check both.
    assert [(i, t.id) for i, t in nearest.policy.assign(nearest, [0, 1], tasks)] == [
        (0, "far"),
        (1, "near"),
    ]
    robots[0].set_pose(Pose.from_xyz(12, 0, 0))  # robot 0 now next to "near"'s pick-up
    assert [(i, t.id) for i, t in greedy.policy.assign(greedy, [0, 1], tasks)] == [
        (0, "near"),
        (1, "far"),
    ]
    with pytest.raises(ConfigError, match="unknown assignment 'closest' \\(built in: nearest"):
        FleetManager(sim, robots, [], assignment="closest", traffic=nearest.traffic)


def test_bad_tasks_are_named(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0")
    manager = FleetManager(sim, robots, [Task("oops", ("n0_0", "n9_9"))]).attach()
    with pytest.raises(ConfigError, match=r"tasks\[0\] \(oops\): unknown node 'n9_9'"):
        sim.step_once()
    with pytest.raises(ConfigError, match="give 'places' or 'pickup' and 'dropoff'"):
        task_list([{"id": "x", "pickup": "n0_0"}])
    with pytest.raises(ConfigError, match=r"unknown keys \['pick_up'\]"):
        task_list([{"pick_up": "n0_0", "dropoff": "n3_0"}])
    assert manager.tasks == []


def test_an_unreachable_place_fails_the_task_with_the_reason() -> None:
    nodes = [
        {"name": "a", "x": 0, "y": 0},
        {"name": "b", "x": 3, "y": 0},
        {"name": "c", "x": 6, "y": 0},
    ]
    lanes = [{"from": "a", "to": "b"}, {"from": "c", "to": "b", "bidirectional": False}]
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_graph(nodes, lanes))
        robot = Agent.from_urdf("mobile_robot", Pose(), sim_core=sim)
        manager = FleetManager(sim, [robot], [Task("t", ("b", "c"))]).attach()
        for _ in range(300):
            sim.step_once()
        (task,) = manager.tasks
        assert task.status is TaskStatus.FAILED and "no route from 'b' to 'c'" in (
            task.reason or ""
        )
        assert manager.kpis()["tasks_failed"] == 1 and manager.job == [None]


def test_task_sources(tmp_path: Path) -> None:
    stream = list(poisson_tasks(360, ["p1", "p2"], ["d1"], np.random.default_rng(3), until=3600))
    again = list(poisson_tasks(360, ["p1", "p2"], ["d1"], np.random.default_rng(3), until=3600))
    assert [t.release_time for t in stream] == [t.release_time for t in again]  # seeded
    assert 600 < len(stream) < 840  # 2 stations x 360 per hour, give or take
    assert all(a.release_time < b.release_time for a, b in itertools.pairwise(stream))
    csv = tmp_path / "orders.csv"
    csv.write_text("id,pickup,dropoff,release_time,priority\no1,p1,d1,5,0\no2,p2,d1,1.5,2\n")
    tasks = tasks_from_file(csv)
    assert [(t.id, t.places, t.release_time, t.priority) for t in tasks] == [
        ("o2", ("p2", "d1"), 1.5, 2),
        ("o1", ("p1", "d1"), 5.0, 0),
    ]
    js = tmp_path / "orders.json"
    js.write_text('[{"places": ["p1", "x", "d1"], "kind": "visit", "deadline": 90}]')
    (visit,) = tasks_from_file(js)
    assert visit.places == ("p1", "x", "d1") and visit.kind == "visit" and visit.deadline == 90
    (tmp_path / "bad.csv").write_text("id,pickup,dropoff,release_time\no1,p1,d1,soon\n")
    with pytest.raises(ConfigError, match=r"bad.csv line 2: tasks\[0\]: could not convert"):
        tasks_from_file(tmp_path / "bad.csv")


def test_batteries_drain_and_robots_charge_before_working() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(grid_site(chargers=("n1_5", "n2_5")))
        robots = fleet_of(sim, "n1_0", "n2_1")
        battery = BatteryParams(
            initial=0.5, low=0.3, resume=0.8, drain_per_m=0.004, charge_per_s=0.01
        )
        manager = FleetManager(sim, robots, deliveries(6, spread=2.0), battery=battery)
        soc = []
        manager.attach()
        sim.register_callback(lambda *_: soc.append(manager.batteries.soc.copy()))  # type: ignore[union-attr]
        for _ in range(8000):
            sim.step_once()
            if (
                sum(t.status is TaskStatus.DONE for t in manager.tasks) == 6
                and not (manager.charging.bound >= 0).any()
            ):
                break
        k = manager.kpis()
        assert k["tasks_completed"] == 6 and k["collisions"]["robot-robot"] == 0
        trace = np.array(soc)
        assert trace.min() < 0.3 and k["battery"]["charging_sessions"] >= 1  # it ran low...
        assert k["time_in_state_s"]["charging"] > 0  # ... and charged, on a charger node
        assert (np.diff(trace, axis=0) > 0).any() and k["battery"]["ran_empty"] == 0
        assert manager.kpis()["battery"]["soc_min"] >= 0.0


def test_a_robot_that_runs_empty_stops_and_fails_its_task() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(grid_site(chargers=("n1_5",)))
        robots = fleet_of(sim, "n1_0")
        battery = BatteryParams(initial=0.25, low=0.2, resume=0.9, drain_per_m=0.02)
        manager = FleetManager(sim, robots, [Task("far", ("n0_0", "n3_5"))], battery=battery)
        manager.attach()
        for _ in range(1500):
            sim.step_once()
        (task,) = manager.tasks
        assert task.status is TaskStatus.FAILED and "ran out of battery" in (task.reason or "")
        assert manager.state[0] == RobotState.FAILED and manager.batteries.soc[0] == 0  # type: ignore[union-attr]
        where = robots[0].get_pose().position
        for _ in range(20):
            sim.step_once()
        assert robots[0].get_pose().position == pytest.approx(where)  # it stays put


def test_batteries_need_reachable_chargers(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0")
    with pytest.raises(ConfigError, match="batteries need chargers"):
        FleetManager(sim, robots, [], battery=BatteryParams())
    with pytest.raises(ConfigError, match=r"low .* must be below resume"):
        BatteryParams(low=0.9, resume=0.5)
    nodes = [
        {"name": "a", "x": 0, "y": 0},
        {"name": "b", "x": 3, "y": 0},
        {"name": "c", "x": 9, "y": 0, "charger": True},
    ]
    with make_sim(timestep=0.1) as other:
        other.set_site(Site.from_graph(nodes, [{"from": "a", "to": "b"}]))
        robot = Agent.from_urdf("mobile_robot", Pose(), sim_core=other, name="lonely")
        with pytest.raises(ConfigError, match="lonely \\(at node 'a'\\) has no route to a charger"):
            FleetManager(other, [robot], [], battery=BatteryParams())


def test_collisions_are_recorded_with_time_kind_and_place(
    sim: MultiRobotSimulationCore,
) -> None:
    (box,) = SimObject.static_boxes([[9.0, 0.0, 0.5]], [[0.3, 0.3, 0.5]], [0.0], sim_core=sim)
    robots = fleet_of(sim, "n0_0")
    manager = FleetManager(sim, robots, [Task("through", ("n0_5",), kind="visit")])
    run_until_done(sim, manager, 1)
    (hit,) = manager.collisions  # the robot drove through a box left on its lane
    assert hit["kind"] == "robot-structure" and {hit["a"], hit["b"]} == {"amr0", box.name}
    assert 7.5 < hit["x"] < 9.0 and abs(hit["y"]) < 0.1 and 5 < hit["time"] < 15
    assert manager.tables()["collisions"] == [hit]
    assert manager.kpis()["collisions"]["robot-structure"] == 1


def test_kpi_time_series(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0", "n1_2", "n1_4", "n2_1")
    manager = FleetManager(sim, robots, deliveries(12), series_every=20.0).attach()
    for _ in range(1001):  # 100 s, and the step that samples it
        sim.step_once()
    series = manager.series
    assert [row["time"] for row in series] == pytest.approx([20, 40, 60, 80, 100], abs=0.11)
    done = [row["tasks_completed"] for row in series]
    assert done == sorted(done) and done[-1] == manager.kpis()["tasks_completed"] > 0
    for row in series:  # every robot is in exactly one state at each sample
        assert sum(row[f"robots_{s}"] for s in STATES) == 4
    assert manager.tables()["series"] == series


def test_robots_park_when_they_have_nothing_to_do() -> None:
    from fleetsim.site.layouts import warehouse_layout

    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        site = warehouse_layout(aisles=3, aisle_length=8, stations=1, parking_rows=1)
        sim.set_site(site)
        g = site.graph
        x, y = g.xy[g.node("park_2_1")]
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(float(x), float(y), 0), sim_core=sim)
        task = Task("t", ("aisle1_2", "drop_0"))
        manager = FleetManager(sim, [robot], [task], pick_time=1, drop_time=1).attach()
        for _ in range(1500):
            sim.step_once()
            if task.status is TaskStatus.DONE and manager.state[0] == RobotState.IDLE:
                break
        assert task.status is TaskStatus.DONE and manager.state[0] == RobotState.IDLE
        spot = manager.traffic.node_of(0)
        assert g.names[spot] in g.nodes_with("parking_spot")  # it drove back to park
        assert robot.get_pose().position[:2] == pytest.approx(g.xy[spot], abs=0.06)


def test_near_misses_are_episodes_by_kind_with_place() -> None:
    walls = Obstacles(np.array([[5.0, 2.0, 0.5]]), np.array([[1.0, 0.5, 0.5]]), np.array([0.0]))
    watch = NearMisses(["a", "b", "c"], radius=0.5, gap=0.2, obstacles=walls)
    far = np.array([[0.0, 0.0], [3.0, 0.0], [9.0, 0.0]])
    watch.check(1.0, far)
    assert watch.records == []
    close = np.array([[0.0, 0.0], [1.1, 0.0], [5.5, 1.0]])  # a-b 0.1 m apart; c 0.5 from the wall
    for t in (2.0, 2.25, 2.5):  # one episode each, however long it lasts
        watch.check(t, close)
    rr, rs = watch.records
    assert rr["kind"] == "robot-robot" and (rr["a"], rr["b"]) == ("a", "b") and rr["time"] == 2.0
    assert rr["gap_m"] == pytest.approx(0.1) and rr["x"] == pytest.approx(0.55)
    assert rs["kind"] == "robot-structure" and rs["a"] == "c" and rs["b"] == "obstacle 0"
    assert rs["gap_m"] == pytest.approx(0.0) and (rs["x"], rs["y"]) == (5.5, 1.0)
    watch.check(3.0, far)
    watch.check(4.0, close)  # they part and meet again: a second episode of each
    assert [r["time"] for r in watch.records] == [2.0, 2.0, 4.0, 4.0]
    rotated = Obstacles(
        np.array([[0.0, 0.0, 0.5]]), np.array([[2.0, 0.1, 0.5]]), np.array([np.pi / 2])
    )
    turn = NearMisses(["a", "b"], radius=0.3, gap=0.2, obstacles=rotated)
    turn.check(0.0, np.array([[0.55, 1.5], [0.0, 2.7]]))  # beside the yawed wall; past its end
    assert [(r["a"], round(r["gap_m"], 6)) for r in turn.records] == [("a", 0.15)]


def test_near_misses_are_the_same_through_either_candidate_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small fleets find near-miss candidates with one matrix, large ones through the collision
    indexes: on random robots and yawed obstacles both give the same pairs and distances, the
    same as an all-pairs oracle."""
    from fleetsim.collision import broadphase
    from fleetsim.fleet.near_miss import _Structure, close_pairs

    rng = np.random.default_rng(3)
    for trial in range(40):
        n, m = int(rng.integers(2, 90)), int(rng.integers(1, 40))
        xy = rng.uniform(0, 12, (n, 2))
        walls = Obstacles(
            np.column_stack((rng.uniform(0, 12, (m, 2)), np.full(m, 0.5))),
            np.column_stack((rng.uniform(0.05, 2.0, (m, 2)), np.full(m, 0.5))),
            rng.uniform(-np.pi, np.pi, m),
        )
        reach = float(rng.uniform(0.2, 1.5))
        found = {}
        for path, limit in (("matrix", 10**9), ("index", 0)):
            monkeypatch.setattr(broadphase, "SMALL_SCENE_PAIRS", limit)
            found[path] = (close_pairs(xy, reach), _Structure(walls, reach).near(xy, reach))
        (pi, pj), (r1, b1, d1) = found["matrix"]
        (qi, qj), (r2, b2, d2) = found["index"]
        assert np.array_equal(pi, qi) and np.array_equal(pj, qj), trial
        assert np.array_equal(r1, r2) and np.array_equal(b1, b2), trial
        assert np.array_equal(d1, d2), trial
        bi, bj = np.triu_indices(n, 1)
        close = np.hypot(*(xy[bi] - xy[bj]).T) < reach
        assert np.array_equal(pi, bi[close]) and np.array_equal(pj, bj[close]), trial


@pytest.mark.parametrize("fleet_size", ["small", "large"])
def test_near_misses_of_robots_that_stood_still_are_kept_not_tested_again(
    fleet_size: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check tests only the robots that moved since the last one (a small fleet from one
    matrix, a large one through the compiled grid, when at most a third moved): over random
    sequences (none, some or all robots moving; some onto each other or a wall) every check
    finds the same pairs, gaps and distances, in the same order, as a watcher seeing that
    moment first."""
    from fleetsim.collision import broadphase, kernels
    from fleetsim.fleet import near_miss

    grid = []
    if fleet_size == "large":  # (the fleets are not, but take the large fleet's path)
        pytest.importorskip("numba")
        monkeypatch.setattr(near_miss, "_INCREMENTAL", 0)
        monkeypatch.setattr(broadphase, "SMALL_SCENE_PAIRS", 0)
        monkeypatch.setattr(kernels, "MIN_BODIES", 2)
        pairs_of = near_miss.candidate_pairs_of

        def spy(*args: Any) -> Any:
            grid.append(args[4].sum())  # (the robots that moved)
            return pairs_of(*args)

        monkeypatch.setattr(near_miss, "candidate_pairs_of", spy)
    rng = np.random.default_rng(11)
    for trial in range(25):
        n, m = int(rng.integers(2, 60)), int(rng.integers(1, 20))
        walls = Obstacles(
            np.column_stack((rng.uniform(0, 8, (m, 2)), np.full(m, 0.5))),
            np.column_stack((rng.uniform(0.05, 1.5, (m, 2)), np.full(m, 0.5))),
            rng.uniform(-np.pi, np.pi, m),
        )
        names = [f"r{k}" for k in range(n)]
        watch = NearMisses(names, radius=0.3, gap=0.25, obstacles=walls)
        xy = rng.uniform(0, 8, (n, 2))
        for step in range(12):
            share = (0.0, 0.1, 0.5, 1.0)[step % 4]
            moving = rng.random(n) < share
            xy = xy.copy()
            xy[moving] += rng.normal(0, 0.4, (int(moving.sum()), 2))
            if step == 5:
                xy[0] = xy[-1] + 0.1  # onto another robot
            got = watch.close(xy)
            want = NearMisses(names, radius=0.3, gap=0.25, obstacles=walls).close(xy)
            for a, b in zip((*got[0], *got[1]), (*want[0], *want[1]), strict=True):
                assert np.array_equal(a, b), (trial, step)
            assert got[0][0].size + got[1][0].size or step != 5, (trial, step)
    assert fleet_size == "small" or len(grid) > 50  # (the large fleet's path was taken)


def test_the_manager_reports_a_robot_passing_close_to_the_structure() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(grid_site())
        robots = fleet_of(sim, "n0_0")
        radius = FleetManager(sim, robots, []).traffic.radius
    site = grid_site()  # with a box whose face is 0.1 m beyond the footprint circle, by a lane
    site.obstacles = Obstacles(
        np.array([[9.0, radius + 0.4, 0.5]]), np.full((1, 3), 0.3), np.zeros(1)
    )
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(site)
        manager = FleetManager(sim, fleet_of(sim, "n0_0"), [Task("past", ("n0_5",), kind="visit")])
        run_until_done(sim, manager, 1)
        assert manager.collisions == []
    (miss,) = manager.tables()["near_misses"]
    assert miss["kind"] == "robot-structure" and miss["a"] == "amr0"
    assert 8 < miss["x"] < 10 and miss["gap_m"] == pytest.approx(0.1, abs=0.02)
    assert manager.kpis()["near_misses"] == {"robot-robot": 0, "robot-structure": 1}


def test_max_active_caps_the_robots_on_tasks(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0", "n1_2", "n1_4", "n2_1")
    assert FleetManager(sim, robots, []).max_active == 24 // 5  # one per five lane nodes
    manager = FleetManager(sim, robots, deliveries(8, spread=0.0), max_active=2).attach()
    most = 0
    for _ in range(6000):
        sim.step_once()
        most = max(most, sum(job is not None for job in manager.job))
        if manager.kpis()["tasks_completed"] == 8:
            break
    assert manager.kpis()["tasks_completed"] == 8 and most == 2
    with pytest.raises(ConfigError, match="max_active must be >= 1, got 0"):
        FleetManager(sim, robots, [], max_active=0)


def test_robots_go_out_at_a_bounded_rate() -> None:
    """Orders that arrive at once start at most `dispatch_per_s` a second (a burst of robots
    after a jam refilled the lanes at once and jammed them again)."""
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(grid_site(cols=12, rows=8))
        robots = fleet_of(sim, *(f"n{r}_{c}" for r in (2, 4) for c in range(12)))
        tasks = [Task(f"t{k}", (f"n0_{k % 12}", f"n7_{(k * 5) % 12}")) for k in range(24)]
        manager = FleetManager(sim, robots, tasks).attach()
        assert manager.dispatch_per_s == 2.0  # the least, for a small site
        started = []
        for _ in range(50):
            sim.step_once()
            started.append(int(manager.has_job.sum()))
        # A second's worth at first, then two a second.
        assert started[0] == 2 and started[9] <= 4 and 9 <= started[-1] <= 12


def test_no_robot_goes_out_while_a_queue_stands_still() -> None:
    """A robot refused a node for 30 s (here: at a closed lane, the only way to its drop-off)
    holds up new orders, even one another robot could do on its own; they start once it
    drives on."""
    places = (("e", -12.0), ("q", -9.0), ("s0", -6.0), ("s1", -3.0), ("p", 0.0), ("d", 3.0))
    nodes = [
        {"name": n, "x": x, "y": 0.0, "pickup": n in "pq", "dropoff": n in "de"} for n, x in places
    ]
    lanes = [{"from": a, "to": b} for (a, _), (b, _) in itertools.pairwise(places)]
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(nodes, lanes))
        robots = fleet_of(sim, "s1", "s0")
        tasks = [Task("first", ("p", "d")), Task("second", ("q", "e"), release_time=40.0)]
        manager = FleetManager(sim, robots, tasks, pick_time=1, drop_time=1, max_active=2)
        manager.attach()
        manager.close_lane("p", "d")
        while sim.sim_time < 60.0:
            sim.step_once()
        assert manager.traffic.waiting_on[0] == sim.site.graph.node("d")  # type: ignore[union-attr]
        assert tasks[1].status == TaskStatus.RELEASED and "assigned" not in tasks[1].times
        manager.open_lane("p", "d")
        run_until_done(sim, manager, 2)
        assert tasks[1].times["assigned"] >= 60.0 and tasks[1].status == TaskStatus.DONE


def test_the_dispatch_rate_is_a_setting(sim: MultiRobotSimulationCore) -> None:
    robots = fleet_of(sim, "n1_0", "n1_2")
    assert FleetManager(sim, robots, [], dispatch_per_s=0.5).dispatch_per_s == 0.5
    with pytest.raises(ConfigError, match="dispatch_per_s must be a number > 0, got 0"):
        FleetManager(sim, robots, [], dispatch_per_s=0)
