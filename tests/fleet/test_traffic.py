"""Traffic control: node reservations keep robots apart on crossings, corridors and rings;
deadlocks are found and undone; robots drive through reserved nodes without stopping."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, MultiRobotSimulationCore, Pose
from fleetsim.errors import FleetSimError
from fleetsim.fleet.traffic import TrafficControl
from fleetsim.site import Site

from ..conftest import make_sim

PLUS = (
    [
        {"name": n, "x": x, "y": y}
        for n, x, y in [
            ("w2", -6, 0),
            ("w1", -3, 0),
            ("c", 0, 0),
            ("e1", 3, 0),
            ("e2", 6, 0),
            ("s2", 0, -6),
            ("s1", 0, -3),
            ("n1", 0, 3),
            ("n2", 0, 6),
        ]
    ],
    [
        {"from": a, "to": b}
        for a, b in [
            ("w2", "w1"),
            ("w1", "c"),
            ("c", "e1"),
            ("e1", "e2"),
            ("s2", "s1"),
            ("s1", "c"),
            ("c", "n1"),
            ("n1", "n2"),
        ]
    ],
)
RING = (
    [
        {"name": n, "x": x, "y": y}
        for n, x, y in [
            ("a", 0, 0),
            ("b", 3, 0),
            ("c", 6, 0),
            ("d", 6, 3),
            ("e", 3, 3),
            ("f", 0, 3),
        ]
    ],
    [
        {"from": a, "to": b}
        for a, b in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "a")]
    ],
)


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        yield s


def robots_at(sim: MultiRobotSimulationCore, *places: str) -> list[Agent]:
    """Robots on the named nodes, facing their first lane (so they meet when they should)."""
    graph = sim.site.graph  # type: ignore[union-attr]
    out = []
    for k, place in enumerate(places):
        x, y = graph.xy[graph.node(place)]
        yaw = 1.5708 if place.startswith("s") else 3.1416 if place in ("c", "e2") else 0.0
        pose = Pose.from_yaw(float(x), float(y), 0.0, yaw)
        out.append(
            Agent.from_urdf(
                "mobile_robot",
                pose,
                sim_core=sim,
                name=f"r{k}",
                motion_mode="differential",
                max_linear_vel=1.0,
            )
        )
    return out


def run(
    sim: MultiRobotSimulationCore, traffic: TrafficControl, robots: list[Agent], steps: int
) -> float:
    """Step until every robot arrived; returns the closest the robots came to each other."""
    arrived: list[int] = []
    traffic.on_arrival = arrived.append
    closest = np.inf
    handles = sim.handles_of(robots)
    for _ in range(steps):
        sim.step_once()
        traffic.step()
        assert_holds(traffic)
        xy = sim.get_poses(handles)[0][:, :2]
        d = np.hypot(*(xy[:, None] - xy[None]).transpose(2, 0, 1))
        closest = min(closest, float(d[~np.eye(len(robots), dtype=bool)].min()))
        if len(arrived) == len(robots):
            return closest
    raise AssertionError(f"only {arrived} arrived; waiting {traffic.waiting_on}")


def assert_holds(traffic: TrafficControl) -> None:
    """The invariant: every robot owns each node from its oldest held to its newest, and no
    node is owned by a robot that does not hold it."""
    held = set()
    for i in range(len(traffic.robots)):
        for node in traffic.route_ahead(i)[: int(traffic.head[i] - traffic.tail[i]) + 1]:
            assert traffic.owner[node] == i, (i, node, traffic.owner[node])
            held.add(node)
    assert set(np.flatnonzero(traffic.owner >= 0).tolist()) <= held


def test_a_route_through_a_node_twice_keeps_it(sim: MultiRobotSimulationCore) -> None:
    """Lanes shorter than the reservation look-ahead: a robot going out and back holds its
    start node twice; leaving it the first time must not let it go (a collision, once)."""
    nodes = [{"name": f"n{k}", "x": 1.6 * k, "y": 0.0} for k in range(4)]
    lanes = [{"from": f"n{k}", "to": f"n{k + 1}"} for k in range(3)]
    sim.set_site(Site.from_graph(nodes, lanes))

    def out_and_back(graph, start, goal, avoid, max_expansions):  # type: ignore[no-untyped-def]
        return [start, start + 1, start] if start == goal else graph.route(start, goal).nodes

    a, b = robots_at(sim, "n0", "n3")
    traffic = TrafficControl(sim, [a, b], router=out_and_back)
    traffic.send(0, "n0")  # n0 -> n1 -> n0
    traffic.send(1, "n0")  # wants to come through: must wait for all of it
    arrived: list[int] = []
    traffic.on_arrival = arrived.append
    for _ in range(600):
        sim.step_once()
        traffic.step()
        assert_holds(traffic)
        if 0 in arrived:
            break
    assert 0 in arrived and sim.collision_counts["robot-robot"] == 0


def test_a_crossing_lets_one_robot_through_first(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*PLUS))
    robots = robots_at(sim, "w2", "s2")
    traffic = TrafficControl(sim, robots)
    traffic.send(0, "e2")
    traffic.send(1, "n2")
    was_waiting = []
    sim.register_callback(lambda *_: was_waiting.append(traffic.waiting.any()))
    closest = run(sim, traffic, robots, 600)
    assert sim.collision_counts["robot-robot"] == 0 and closest > traffic.clearance / 2
    assert any(was_waiting) and traffic.refusals == 1  # one of them was held at the crossing
    assert robots[0].get_pose().position[:2] == pytest.approx((6, 0), abs=0.06)
    assert robots[1].get_pose().position[:2] == pytest.approx((0, 6), abs=0.06)
    assert traffic.deadlocks == []


def test_without_traffic_control_they_collide(sim: MultiRobotSimulationCore) -> None:
    """The control experiment: the same two routes driven blindly meet in the middle."""
    sim.set_site(Site.from_graph(*PLUS))
    a, b = robots_at(sim, "w2", "s2")
    a.go_to("e2")
    b.go_to("n2")
    for _ in range(300):
        sim.step_once()
    assert sim.collision_counts["robot-robot"] >= 1


def test_a_head_on_deadlock_on_a_ring_is_undone(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*RING))
    robots = robots_at(sim, "a", "c")
    traffic = TrafficControl(sim, robots)
    assert traffic.send(0, "c") == [0, 1, 2]  # both take the short way, through b
    assert traffic.send(1, "a") == [2, 1, 0]
    run(sim, traffic, robots, 1500)
    assert sim.collision_counts["robot-robot"] == 0
    (deadlock,) = traffic.deadlocks
    assert deadlock.resolved and set(deadlock.robots) == {"r0", "r1"}
    # Every ring node is a corridor node: each asks for the whole way, refused at the other's
    assert set(deadlock.nodes) == {"a", "c"}
    assert robots[0].get_pose().position[:2] == pytest.approx((6, 0), abs=0.06)
    assert robots[1].get_pose().position[:2] == pytest.approx((0, 0), abs=0.06)


def test_reserved_nodes_are_driven_through(sim: MultiRobotSimulationCore) -> None:
    """Reserving ahead by the braking distance: a lone robot never slows at a node."""
    nodes = [{"name": f"n{k}", "x": 2.0 * k, "y": 0} for k in range(12)]
    lanes = [{"from": f"n{k}", "to": f"n{k + 1}"} for k in range(11)]
    sim.set_site(Site.from_graph(nodes, lanes))
    (robot,) = robots_at(sim, "n0")
    traffic = TrafficControl(sim, [robot])
    traffic.send(0, "n11")
    speeds = []
    arrived: list[int] = []
    traffic.on_arrival = arrived.append
    for _ in range(400):
        sim.step_once()
        traffic.step()
        speeds.append(np.hypot(*robot.linear_velocity[:2]))
        if arrived:
            break
    assert arrived == [0] and robot.get_pose().x == pytest.approx(22.0, abs=0.06)
    cruise = np.array(speeds)[(np.array(speeds) > 0.99).argmax() : -20]
    assert cruise.min() > 0.99  # full speed from the first time it got there to braking
    assert (traffic.owner >= 0).sum() == 1  # only the node it stands on stays held


def test_robots_must_start_on_nodes_apart(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*PLUS))
    stray = Agent.from_urdf("mobile_robot", Pose.from_xyz(1.5, 1.5, 0), sim_core=sim)
    with pytest.raises(ConfigError, match=r"is not on a node \(the nearest, 'c', is 2.12 m"):
        TrafficControl(sim, [stray])
    stray.set_pose(Pose.from_xyz(0, 0, 0))
    crowd = [stray, Agent.from_urdf("mobile_robot", Pose.from_xyz(0.1, 0, 0), sim_core=sim)]
    with pytest.raises(ConfigError, match=r"start within .* of each other \(node 'c'\)"):
        TrafficControl(sim, crowd)
    with make_sim() as bare, pytest.raises(ConfigError, match="needs a site"):
        TrafficControl(bare, [])


def test_a_corridor_deadlock_without_a_way_round_is_reported(
    sim: MultiRobotSimulationCore,
) -> None:
    nodes = [{"name": f"n{k}", "x": 3.0 * k, "y": 0} for k in range(5)]
    lanes = [{"from": f"n{k}", "to": f"n{k + 1}"} for k in range(4)]
    sim.set_site(Site.from_graph(nodes, lanes))
    robots = robots_at(sim, "n0", "n4")
    robots[1].set_pose(Pose.from_yaw(12, 0, 0, 3.1416))
    traffic = TrafficControl(sim, robots)
    traffic.send(0, "n4")
    traffic.send(1, "n0")
    for _ in range(300):
        sim.step_once()
        traffic.step()
    (deadlock,) = traffic.deadlocks  # found once, though it lasts
    assert not deadlock.resolved and traffic.waiting.all()
    assert sim.collision_counts["robot-robot"] == 0
    assert all(np.hypot(*r.linear_velocity[:2]) < 1e-9 for r in robots)  # stopped, apart
    gap = abs(robots[0].get_pose().x - robots[1].get_pose().x)
    assert gap >= 3.0 - 0.06


def test_idle_robots_are_driven_around(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*RING))
    robots = robots_at(sim, "a", "b")
    traffic = TrafficControl(sim, robots)
    assert traffic.send(0, "c") == [0, 5, 4, 3, 2]  # round r1, standing on b
    run_one(sim, traffic, 0, 600)
    assert robots[0].get_pose().position[:2] == pytest.approx((6, 0), abs=0.06)


def test_a_robot_blocked_by_an_idle_one_says_so(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*PLUS))
    robots = robots_at(sim, "w2", "c")
    traffic = TrafficControl(sim, robots)
    traffic.send(0, "e2")  # only through c, where r1 stands
    for _ in range(200):
        sim.step_once()
        traffic.step()
    assert traffic.blocked_by_idle == [(0, 1)] and traffic.waiting_on[0] == 2
    # w1 only leads on to c (a corridor node): it waits before it, at w2, not inside
    assert robots[0].get_pose().x == pytest.approx(-6.0, abs=0.06)
    traffic.send(1, "n2")  # the idle robot moves away: r0 carries on
    run(sim, traffic, robots, 600)
    assert robots[0].get_pose().position[:2] == pytest.approx((6, 0), abs=0.06)


def run_one(sim: MultiRobotSimulationCore, traffic: TrafficControl, i: int, steps: int) -> None:
    arrived: list[int] = []
    traffic.on_arrival = arrived.append
    for _ in range(steps):
        sim.step_once()
        traffic.step()
        if i in arrived:
            return
    raise AssertionError(f"robot {i} did not arrive")


def test_a_custom_router_plans_the_routes(sim: MultiRobotSimulationCore) -> None:
    sim.set_site(Site.from_graph(*RING))
    graph = sim.site.graph  # type: ignore[union-attr]
    b = graph.node("b")

    def one_way_round(graph, start, goal, avoid, max_expansions):  # type: ignore[no-untyped-def]
        """Never through b (say, a lane kept for people)."""
        return graph.route(start, goal, [*avoid, b], max_expansions).nodes

    (robot,) = robots_at(sim, "a")
    traffic = TrafficControl(sim, [robot], router=one_way_round)
    assert traffic.send(0, "c") == [0, 5, 4, 3, 2]
    run_one(sim, traffic, 0, 900)
    assert robot.get_pose().position[:2] == pytest.approx((6, 0), abs=0.06)

    def wrong(graph, start, goal, avoid, max_expansions):  # type: ignore[no-untyped-def]
        return [goal]

    broken = TrafficControl(sim, [robot], router=wrong)
    with pytest.raises(FleetSimError, match="must return nodes from 2 to 0"):
        broken.send(0, "a")


def test_a_dead_end_spur_is_entered_only_when_empty(sim: MultiRobotSimulationCore) -> None:
    """A station at the end of a two-way spur: a robot bound for it waits before the junction
    while another leaves it (holding the junction would deadlock them head-on)."""
    nodes = [
        {"name": "m0", "x": 0, "y": 0},
        {"name": "m1", "x": 3, "y": 0},
        {"name": "m2", "x": 6, "y": 0},
        {"name": "s", "x": 3, "y": 3},
    ]
    one_way = {"bidirectional": False}
    lanes = [
        {"from": "m0", "to": "m1", **one_way},
        {"from": "m1", "to": "m2", **one_way},
        {"from": "m1", "to": "s"},
    ]
    sim.set_site(Site.from_graph(nodes, lanes))
    leaving, coming = robots_at(sim, "s", "m0")
    traffic = TrafficControl(sim, [leaving, coming])
    traffic.send(1, "s")  # first: it must not take m1 while the spur is occupied
    for _ in range(5):
        sim.step_once()
        traffic.step()
    assert traffic.owner[1] == -1 and traffic.waiting_on[1] == 3  # waits at m0 for s
    traffic.send(0, "m2")
    run(sim, traffic, [leaving, coming], 600)
    assert traffic.deadlocks == [] and sim.collision_counts["robot-robot"] == 0
    assert coming.get_pose().position[:2] == pytest.approx((3, 3), abs=0.06)


@pytest.mark.parametrize("door", [True, False])
def test_lanes_in_a_mutex_group_take_one_robot_at_a_time(door: bool) -> None:
    nodes = [
        {"name": n, "x": x, "y": y}
        for n, x, y in [
            ("a", 0, 0),
            ("b", 6, 0),
            ("e", 9, 0),
            ("x", -3, -6),
            ("c", 0, -6),
            ("d", 6, -6),
            ("f", 9, -6),
        ]
    ]
    group = {"mutex": "door"} if door else {}
    lanes = [
        {"from": "a", "to": "b", **group},
        {"from": "b", "to": "e"},
        {"from": "x", "to": "c"},
        {"from": "c", "to": "d", **group},
        {"from": "d", "to": "f"},
    ]
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(nodes, lanes))
        robots = robots_at(sim, "a", "x")
        traffic = TrafficControl(sim, robots)
        traffic.send(0, "e")
        traffic.send(1, "f")
        g = traffic.graph
        members = [g.node(n) for n in ("a", "b", "c", "d")]
        both = 0
        arrived: list[int] = []
        traffic.on_arrival = arrived.append
        for _ in range(400):
            sim.step_once()
            traffic.step()
            holders = set(traffic.owner[members].tolist()) - {-1}
            both += holders == {0, 1}
            if len(arrived) == 2:
                break
        assert sorted(arrived) == [0, 1]
        assert (both == 0) == door  # without the group they use their lanes together


def test_a_freed_node_goes_to_the_robot_that_waited_longest(
    sim: MultiRobotSimulationCore,
) -> None:
    """First refused, first served: r1 and then r0 are refused the crossing (an idle robot
    stands on it); when it leaves, r1 crosses first, though r0 comes first in index order (a
    robot merging into a busy lane used to starve so, behind every robot on the lane)."""
    nodes, lanes = PLUS
    nodes = [*nodes, {"name": "n3", "x": 0, "y": 9}, {"name": "e3", "x": 9, "y": 0}]
    lanes = [*lanes, {"from": "n2", "to": "n3"}, {"from": "e2", "to": "e3"}]
    sim.set_site(Site.from_graph(nodes, lanes))
    robots = robots_at(sim, "w2", "s2", "c")
    traffic = TrafficControl(sim, robots)
    crossing = sim.site.graph.node("c")  # type: ignore[union-attr]
    traffic.send(1, "e3")
    for _ in range(50):
        sim.step_once()
        traffic.step()
    traffic.send(0, "e2")
    for _ in range(50):
        sim.step_once()
        traffic.step()
    assert traffic.waiting_on[0] == traffic.waiting_on[1] == crossing
    assert traffic.waiting_since[1] < traffic.waiting_since[0] < np.inf
    traffic.send(2, "n3")  # the robot on the crossing leaves
    takers = []
    for _ in range(400):
        sim.step_once()
        traffic.step()
        owner = int(traffic.owner[crossing])
        if owner in (0, 1) and (not takers or takers[-1] != owner):
            takers.append(owner)
    assert takers == [1, 0]
    assert sim.collision_counts["robot-robot"] == 0


@pytest.mark.parametrize("check", [True, False], ids=["as-is", "without-the-check"])
def test_a_robot_stopped_beside_the_way_into_a_node_it_left_is_given_way(
    check: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run fuzzing found: a robot stopped (a fault) just past a drop-off station it had let
    go, beside the station's way in, where the two lanes meet at a sharp angle; the next robot
    granted the station brushed past it. Now a robot gives way to a robot that left a node of
    its way and still stands by it (and the deadlock watch sees whom it waits for); without
    that check the same run collides."""
    from pathlib import Path

    from fleetsim.scenario import build, load_scenario
    from fleetsim.scenario.runner import run_scenario

    if not check:
        monkeypatch.setattr(TrafficControl, "_in_the_way", lambda self, i, way: -1)
    case = Path(__file__).with_name("cases") / "stopped_by_a_station.yaml"
    built = build(load_scenario(str(case)))
    with built.sim as sim:
        summary = run_scenario(built)
        robot_robot = sim.collision_counts["robot-robot"]
    assert (robot_robot == 0) if check else (robot_robot >= 1)
    assert summary.kpis["stalls"] == 0
