"""A blocked lane: a box appears on it once nothing is in the way and goes when the fault
ends; the fleet manager closes the lane to its routes and sends its robots round it (or, with
no way round, has them wait at its entry); software that ignores it runs into the box."""

from __future__ import annotations

import math

import pytest

from fleetsim import ConfigError, MultiRobotSimulationCore, Pose
from fleetsim.faults import FaultEvent, FaultInjector, FaultPlan
from fleetsim.fleet import FleetManager, Task
from fleetsim.site import Site

from ..conftest import make_sim
from ..fleet.test_manager import fleet_of

NODES = [
    {"name": "a", "x": 0.0, "y": 0.0},
    {"name": "b", "x": 8.0, "y": 0.0},
    {"name": "c", "x": 16.0, "y": 0.0},
    {"name": "d", "x": 8.0, "y": 6.0},
]
BYPASS = (
    NODES,
    [{"from": u, "to": v} for u, v in (("a", "b"), ("b", "c"), ("a", "d"), ("d", "c"))],
)
CORRIDOR = (NODES[:3], [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}])


def blocked(lane: str, at: float, duration: float) -> FaultPlan:
    return FaultPlan(events=(FaultEvent(at, "lane_blocked", lane, duration),))


def boxes(sim: MultiRobotSimulationCore) -> list[str]:
    return [o.name for o in sim.sim_objects if o.name.startswith("blocked ")]


def test_the_fleet_manager_sends_its_robots_round_a_blocked_lane() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*BYPASS))
        robots = fleet_of(sim, "a")
        tasks = [Task("there", ("c", "a")), Task("again", ("c", "a"), release_time=1.0)]
        manager = FleetManager(sim, robots, tasks, park=False).attach()
        faults = FaultInjector(sim, robots, blocked("a->b", 0.0, 300.0), manager).attach()
        closest_to_d, passed_box = math.inf, False
        for _ in range(1800):
            sim.step_once()
            x, y = robots[0].get_pose().x, robots[0].get_pose().y
            closest_to_d = min(closest_to_d, math.hypot(x - 8.0, y - 6.0))
            passed_box |= abs(y) < 0.5 and 3.0 < x < 5.0
            if all(t.status.value == "done" for t in manager.tasks):
                break
        assert [t.status.value for t in manager.tasks] == ["done", "done"]
        assert boxes(sim) == ["blocked a->b"]  # still blocked: the box on the lane
        assert sim.collision_count == 0 and not passed_box and closest_to_d < 0.2
        assert manager.graph.closed_lanes == {manager.graph.lane("a", "b")}
        assert faults.kpis()["faults"]["lane_blocked"] == 1


def test_software_that_ignores_the_closed_lane_runs_into_the_box() -> None:
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_graph(*BYPASS))
        robots = fleet_of(sim, "a")
        FaultInjector(sim, robots, blocked("a->b", 0.0, 60.0)).attach()
        robots[0].set_goal(Pose.from_xyz(16.0, 0.0, 0.0))  # straight along a -> b -> c
        for _ in range(300):
            sim.step_once()
        assert sim.collision_counts["robot-structure"] >= 1
        assert boxes(sim) == ["blocked a->b"]


def test_with_no_way_round_robots_wait_at_the_entry_until_it_opens() -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*CORRIDOR))
        robots = fleet_of(sim, "a")
        manager = FleetManager(
            sim, robots, [Task("far", ("c", "a"))], park=False, stall_after_s=10.0
        ).attach()
        FaultInjector(sim, robots, blocked("c->b", 0.5, 40.0), manager).attach()  # either way
        for _ in range(400):  # 40 s: at the entry, waiting
            sim.step_once()
        pose = robots[0].get_pose()
        assert math.hypot(pose.x - 8.0, pose.y) < 0.2 and boxes(sim) == ["blocked c->b"]
        (stall,) = manager.stalls.records
        assert stall.waits_for == "lane b->c (closed)" and stall.ended is None
        for _ in range(600):
            sim.step_once()
        assert manager.tasks[0].status.value == "done" and boxes(sim) == []
        assert stall.ended is not None and sim.collision_count == 0
        assert manager.graph.closed_lanes == frozenset()


def test_a_box_waits_for_the_robot_on_the_lane_to_drive_off_it() -> None:
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_graph(*CORRIDOR))
        robots = fleet_of(sim, "a")
        robots[0].set_goal(Pose.from_xyz(16.0, 0.0, 0.0))
        FaultInjector(sim, robots, blocked("a->b", 2.0, 60.0)).attach()
        appeared = None
        for _ in range(400):
            sim.step_once()
            if appeared is None and boxes(sim):
                appeared = robots[0].get_pose().x
        assert appeared is not None and appeared > 7.5  # at its end, off the lane a -> b
        assert sim.collision_count == 0


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("a-b", "'from->to'"),
        ("a->x", "node"),
        ("a->c", "no lane leads"),
    ],
)
def test_a_lane_that_is_not_there_is_an_error(target: str, says: str) -> None:
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_graph(*BYPASS))
        robots = fleet_of(sim, "a")
        with pytest.raises(ConfigError, match=says):
            FaultInjector(sim, robots, blocked(target, 1.0, 10.0))


LANES = "faults={site: [{type: lane_blocked, rate_per_hour: 30, duration: [30, 120]}]}"


def test_random_blocked_lanes_on_the_warehouse_are_seeded_and_driven_round() -> None:
    """Lanes drawn at random from the site's, the same for the same seed; the reference
    fleet manager drives round them without a collision."""
    from .warehouse_runs import run

    first, _ = run(LANES, duration=600.0)
    again, _ = run(LANES, duration=600.0)
    rows = first.tables["faults"]
    assert rows == again.tables["faults"] and len(rows) >= 2
    assert {r["kind"] for r in rows} == {"lane_blocked"} and len({r["target"] for r in rows}) > 1
    assert all(30 <= r["duration"] <= 120 for r in rows)
    assert first.collisions == 0 and first.kpis["tasks_completed"] > 40


@pytest.mark.parametrize(
    ("site", "says"),
    [
        ("{type: lane_blocked, at: 5}", "name the target"),
        ("{type: lane_blocked, target: 'a->b', rate_per_hour: 3}", "at random, list `targets`"),
        ("{type: lane_blocked, target: 'a->b', duration: [1, 2]}", "one duration"),
    ],
)
def test_a_bad_site_fault_is_an_error_naming_it(site: str, says: str) -> None:
    from fleetsim.scenario import load_scenario

    with pytest.raises(ConfigError, match=says):
        load_scenario("warehouse", [f"faults={{site: [{site}]}}"])


ROUND = (  # from a, e is 6 m east through m; the way round is 44 m
    [
        {"name": "a", "x": 0.0, "y": 0.0},
        {"name": "m", "x": 3.0, "y": 0.0},
        {"name": "e", "x": 6.0, "y": 0.0},
        {"name": "b", "x": -8.0, "y": 0.0},
        {"name": "c", "x": -8.0, "y": 8.0},
        {"name": "d", "x": 6.0, "y": 8.0},
    ],
    [
        {"from": u, "to": v}
        for u, v in (("a", "m"), ("m", "e"), ("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"))
    ],
)


def test_a_robot_sent_the_long_way_round_is_not_stalled() -> None:
    """The lane to its place closes on its way there: it turns back and goes round, and the
    way left is measured along the new route, so driving the 40 m round (longer than the
    stall time) is progress."""
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(*ROUND))
        robots = fleet_of(sim, "a")
        manager = FleetManager(
            sim, robots, [Task("near", ("e", "a"))], park=False, stall_after_s=8.0
        ).attach()
        FaultInjector(sim, robots, blocked("m->e", 1.0, 600.0), manager).attach()
        for _ in range(1500):
            sim.step_once()
            if manager.tasks[0].status.value == "done":
                break
        assert manager.tasks[0].status.value == "done" and sim.sim_time > 40.0
        assert manager.stalls.records == [] and sim.collision_count == 0


def test_on_a_building_the_box_stands_on_the_lanes_floor_and_lift_rides_are_refused() -> None:
    from fleetsim.scenario import build, load_scenario

    upstairs = "faults={site: [{type: lane_blocked, target: 'L3_c11->L3_c12', at: 1}]}"
    built = build(load_scenario("hospital", ["simulation.duration=3", upstairs]))
    with built.sim as sim:
        sim.run_simulation()
        (box,) = [o for o in sim.sim_objects if o.name.startswith("blocked ")]
        assert box.get_pose().z == pytest.approx(sim.site.elevation("L3") + 0.25)  # type: ignore[union-attr]
    ride = "faults={site: [{type: lane_blocked, target: 'L1_LiftA->L2_LiftA', at: 1}]}"
    with pytest.raises(ConfigError, match="use lift_out_of_service"):
        build(load_scenario("hospital", [ride]))
