"""`TrafficControl`: node reservations so robots sharing a site's graph never meet.

A robot drives only as far as the nodes it holds. Ahead of it (by its braking distance plus a
margin) it reserves the next node of its route; a node is granted when no other robot holds it
or a node within `clearance` of it (its conflict set). A robot that is refused stops at its last
held node and asks again each step: it is waiting. Nodes behind a robot are released once it is
`clearance` away. Two robots therefore never hold nodes closer than `clearance`, and a robot is
only ever on a lane between two nodes it holds.

Per-step work is array operations over the robots on routes; only robots that pass a node, need
a new node, release one or arrive do Python work. Every `check_period` seconds the waiting
robots are checked for a cycle (A waits for B, B for A): a deadlock, undone and recorded by
`fleet.deadlocks`. Which nodes conflict comes from `fleet.conflicts`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.conflicts import (
    conflict_sets,
    distinct_neighbours,
    levels_apart,
    mutex_nodes,
)
from fleetsim.fleet.deadlocks import Deadlock, find_deadlocks
from fleetsim.fleet.door_passage import DoorPassage
from fleetsim.fleet.give_way import in_the_way
from fleetsim.fleet.lane_closures import LaneClosures
from fleetsim.fleet.lift_passage import LiftPassage
from fleetsim.fleet.placement import NODE_SNAP_M, place_on_nodes
from fleetsim.fleet.routing import Router, shortest_route
from fleetsim.site import NavGraph, RouteError

ARRIVED_M = 0.05


class TrafficControl:
    """Drive `robots` along routes on the simulation's site without two of them meeting.

    `send(i, goal)` routes robot i (index into `robots`); `on_arrival(i)` is called when it
    stops at its goal. Robots must start on nodes. `clearance` (default: the largest robot's
    footprint diameter plus 0.2 m) is the distance two robots' nodes must keep. Lanes in a
    mutex group (the graph's `mutex`) take one robot at a time: holding any node of the
    group's lanes keeps the others from all of them.
    """

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Agent],
        clearance: float | None = None,
        check_period: float = 1.0,
        router: Router | None = None,
    ) -> None:
        if sim.site is None:
            raise ConfigError("traffic control needs a site: sim.set_site(...) first")
        self.sim, self.robots = sim, list(robots)
        self.graph: NavGraph = sim.site.graph
        self.router: Router = router if router is not None else shortest_route
        self.handles = sim.handles_of(self.robots)
        self._rows: tuple[object, int, np.ndarray] | None = None  # (table, layout, body rows)
        self._motion = [robot.motion_handle for robot in self.robots]
        radius = self.radius = self._footprint_radius()
        self.clearance = float(clearance) if clearance is not None else 2 * radius + 0.2
        self._init_reservations()
        self._init_waiting()
        self._init_deadlocks(check_period)
        self.on_arrival: Callable[[int], None] | None = None
        self.on_detour: Callable[[int], None] | None = None  # sent round to the same goal
        self.lift_rides = LiftPassage(self)  # lifts between floors: called, ridden, let go
        place_on_nodes(self)
        self.passage = DoorPassage(self)  # doors on the way: asked to open, held, let go
        self.closures = LaneClosures(self)  # lanes closed for a while (a blocked aisle)

    def _init_reservations(self) -> None:
        """Who holds which node, each robot's route and where along it it is."""
        n, r = len(self.graph), len(self.robots)
        apart = levels_apart(self.graph, self.clearance)
        self.conflicts = conflict_sets(apart, self.clearance, mutex_nodes(self.graph))
        # plain-number views for the loops that run whenever a robot wants a node
        self._near_start, self._near = self.conflicts.indptr.data, self.conflicts.indices.data
        self.owner = np.full(n, -1, dtype=np.int32)  # the robot holding each node, or -1
        self.routes: list[list[int]] = [[] for _ in range(r)]
        self.limits: list[np.ndarray] = [np.empty(0) for _ in range(r)]
        self.two_way: list[list[bool]] = [[] for _ in range(r)]
        self._rest: list[np.ndarray] = [np.zeros(1) for _ in range(r)]  # route length left
        self.ahead_m = np.zeros(r)  # from each robot's next node to its route's end, metres
        self.route_end = np.full(r, -1, dtype=np.int64)  # the node each route ends at
        self.degree = distinct_neighbours(self.graph)
        self.tail = np.zeros(r, dtype=np.int64)  # oldest held route index
        self.head = np.zeros(r, dtype=np.int64)  # newest held route index
        self.last = np.zeros(r, dtype=np.int64)  # the goal's route index
        self.next = np.zeros(r, dtype=np.int64)  # the route index the robot drives to
        self.active = np.zeros(r, dtype=bool)
        self._idle_cache: set[int] | None = None
        self.passed = np.zeros(r, dtype=np.int64)  # nodes each robot has passed (progress)
        # Where each robot's node before its next, its next, its tail and its head node are:
        # views of one (R, 8) array, so a robot's four are written in one assignment.
        self._nodes_xy = np.zeros((r, 8))
        self.prev_xy, self.next_xy = self._nodes_xy[:, 0:2], self._nodes_xy[:, 2:4]
        self.tail_xy, self.head_xy = self._nodes_xy[:, 4:6], self._nodes_xy[:, 6:8]
        v = np.array([a.spawn_params.max_linear_vel for a in self.robots], dtype=np.float64)
        acc = np.array([a.spawn_params.max_linear_accel for a in self.robots], dtype=np.float64)
        self.lookahead = v * v / (2 * acc) + 2 * v * self.sim.params.timestep + self.clearance

    def _init_waiting(self) -> None:
        """Robots refused a node: what each waits for, since when, who gives way to whom."""
        n, r = len(self.graph), len(self.robots)
        self.waiting_on = np.full(r, -1, dtype=np.int64)
        self._asleep = np.zeros(r, dtype=bool)  # refused: ask again when a node near frees
        self._waiters: dict[int, set[int]] = {}  # wanted node -> robots refused it
        # When each robot was first refused the node it waits for (inf: not waiting): a node
        # that frees goes to the robots that waited longest, before any other asks for it.
        self.waiting_since = np.full(r, math.inf)
        self._woken: list[int] = []  # robots a freed node woke, not yet asked again
        # The robot that last let each node go (-1: none), and the robot each waiting robot
        # gives way to because it stands by its way in (-1: none; see `_in_the_way`).
        self.left_by = np.full(n, -1, dtype=np.int64)
        self.giving_way_to = np.full(r, -1, dtype=np.int64)
        self._xy_now: np.ndarray | None = None  # the robots' positions this step
        self.refusals = 0  # times a robot was refused a node (another held it or one near)

    def _init_deadlocks(self, check_period: float) -> None:
        """Wait-for cycles: the episodes found, when to look again, robots stepping aside."""
        self.deadlocks: list[Deadlock] = []  # episodes, in the order first found
        self.episodes: dict[frozenset[int], Deadlock] = {}  # the same, by their robots
        # Last resort for a deadlock nothing here undoes: the fleet manager may give one of the
        # robots another goal; returns whether it did.
        self.on_deadlock: Callable[[list[int]], bool] | None = None
        self.check_period = check_period
        self._next_check = 0.0
        self.cycles: set[frozenset[int]] = set()  # wait-for cycles at the last check
        self.stepping_aside: dict[int, int] = {}  # robots stepping aside -> their goal
        self.blocked_by_idle: list[tuple[int, int]] = []  # (waiting, idle) at the last check

    # -- commands -----------------------------------------------------------------------------

    def node_of(self, i: int) -> int:
        """The node robot i stands on or last passed (its route's current tail)."""
        return self.routes[i][int(self.next[i]) - 1]

    def send(
        self,
        i: int,
        goal: str | int,
        avoid: Sequence[int] = (),
        max_expansions: int | None = None,
    ) -> list[int]:
        """Route robot i to `goal` (from the last node it holds) and drive; returns the route.
        The route goes around robots standing idle when it can. Raises `RouteError` when there
        is no route, leaving the robot as it was."""
        route, tail, head = self.routes[i], int(self.tail[i]), int(self.head[i])
        start = min(tail, int(self.next[i]) - 1)  # keep the node it last passed, held or not
        kept = route[start : head + 1]
        goal_node = self.graph.node(goal)
        detour = self.active[i] and route and route[-1] == goal_node  # (the same goal)
        parked = self.idle_nodes() - {kept[-1], goal_node}
        limit = max_expansions
        around = set(avoid)
        try:
            plan = self.router(self.graph, kept[-1], goal_node, sorted(parked | around), limit)
        except RouteError:
            try:
                if parked <= around:
                    raise
                plan = self.router(self.graph, kept[-1], goal_node, sorted(around), limit)
            except RouteError:
                if not self.closures.legs:
                    raise
                with self.graph.closed_lanes_open():  # only through a closed lane: to it, and
                    plan = self.router(self.graph, kept[-1], goal_node, sorted(around), limit)
                    # wait there until it opens
        if not plan or plan[0] != kept[-1] or plan[-1] != goal_node:
            raise FleetSimError(
                f"router {self.router!r:.60} must return nodes from {kept[-1]} to {goal_node}, "
                f"got {list(plan)[:6]!r}"
            )
        if i in self.passage.holds or self.passage.waiting:
            self.passage.rerouted(i, self.positions()[i], kept)
        self.lift_rides.rerouted(i)
        self.routes[i] = kept + list(plan[1:])
        self.last[i] = len(self.routes[i]) - 1
        self._legs_of(i)
        self.next[i] -= start
        self.tail[i], self.head[i] = tail - start, head - start
        self.active[i] = True
        self._idle_cache = None
        self._wait(i, -1)
        self._refresh_xy(i)
        self._drive(i)
        if detour and self.on_detour is not None:
            self.on_detour(i)
        return self.routes[i]

    def is_free_for(self, i: int, node: int) -> bool:
        """Whether robot i could be granted `node` now (no other robot holds it or a node
        within `clearance` of it)."""
        return self.blocker(i, node) < 0

    def route_ahead(self, i: int) -> list[int]:
        """The nodes robot i holds and will drive through, in order."""
        return self.routes[i][int(self.tail[i]) :]

    def halt(self, i: int) -> None:
        """Robot i stops for good where it is (out of battery, broken down): it keeps the
        nodes it holds, so no one drives into it."""
        route = self.routes[i]
        held = route[int(self.tail[i]) : int(self.head[i]) + 1]
        self.routes[i] = held
        self.last[i] = len(held) - 1
        self.tail[i], self.head[i], self.next[i] = 0, len(held) - 1, len(held)
        self._legs_of(i)
        self.active[i] = False
        self._idle_cache = None
        self._wait(i, -1)
        self.stepping_aside.pop(i, None)
        self._refresh_xy(i)

    def node_xy(self, i: int, node: int) -> tuple[float, float]:
        """Where `node` is for robot i: its own spot in a cabin it shares, else the node."""
        spot = self.lift_rides.spots.get(i) if self.lift_rides.spots else None
        if spot and node in spot:
            return spot[node]
        return float(self.graph.xs[node]), float(self.graph.ys[node])

    def standing_on(self, i: int) -> int:
        """The node robot i stands on (within `NODE_SNAP_M`, stopped), else -1."""
        node = self.node_of(i)
        if self.robots[i].is_moving:
            return -1
        x, y = self.positions()[i]
        nx, ny = self.node_xy(i, node)
        return node if math.hypot(x - nx, y - ny) <= NODE_SNAP_M else -1

    def let_go_ahead(self, i: int) -> None:
        """Robot i, standing on a node, gives up the nodes it holds beyond it (it will be
        sent elsewhere from there)."""
        here = int(self.next[i]) - 1
        route = self.routes[i]
        for node in set(route[here + 1 : int(self.head[i]) + 1]) - set(route[: here + 1]):
            self._free(i, node)
        self.routes[i] = route[: here + 1]
        self.last[i] = self.head[i] = here
        self.tail[i] = min(int(self.tail[i]), here)
        self._legs_of(i)
        self._wait(i, -1)
        self._refresh_xy(i)

    def give_back_beyond(self, i: int, k: int) -> None:
        """Robot i, not yet past route index k, lets go of the nodes it holds beyond it and
        drives no farther than it (a lane ahead closed: it will be sent round from there)."""
        route, head = self.routes[i], int(self.head[i])
        if head <= k:
            return
        for node in set(route[k + 1 : head + 1]) - set(route[: k + 1]):
            self._free(i, node)
        self.head[i] = k
        self._refresh_xy(i)
        if k < int(self.next[i]):  # still on the node before: stays there
            self.robots[i].stop()
        else:
            self._drive(i)

    def wake(self, i: int) -> None:
        """Robot i, refused the node it needs next, asks again at the next step."""
        self._asleep[i] = False

    @property
    def waiting(self) -> np.ndarray:
        """Which robots are refused the node they need next, shape (R,)."""
        return self.waiting_on >= 0

    # -- the step -----------------------------------------------------------------------------

    def kpis(self) -> dict[str, Any]:
        """Conflicts (times a robot was refused a node and waited), deadlock episodes (one
        that came back counts once), how many are unresolved and how often they were seen;
        then the doors' and the lifts' numbers."""
        return {
            "conflicts": self.refusals,
            "deadlocks": len(self.deadlocks),
            "deadlocks_unresolved": sum(not d.resolved for d in self.deadlocks),
            "deadlock_detections": sum(d.detections for d in self.deadlocks),
        }

    def positions(self) -> np.ndarray:
        """Robot positions (R, 2) now (a copy)."""
        bodies = self.sim.world.bodies
        cached = self._rows
        if cached is None or cached[0] is not bodies or cached[1] != bodies.layout:
            cached = self._rows = (bodies, bodies.layout, bodies.rows(self.handles))
        xy: np.ndarray = bodies["pos"].take(cached[2], axis=0)[:, :2]
        return xy

    def step(self, positions: np.ndarray | None = None) -> None:
        """Advance the reservations after the robots moved (call once per simulation step;
        `positions`: the robots' (R, 2) now, when the caller has them)."""
        act = self.active.nonzero()[0]
        if act.size == 0:
            return
        p = (self.positions() if positions is None else positions)[act]
        nxt, tail, head, last = self.next[act], self.tail[act], self.head[act], self.last[act]
        next_xy = self.next_xy[act]
        seg = next_xy - self.prev_xy[act]
        passed = np.add.reduce((p - next_xy) * seg, axis=1) >= 0
        passed &= nxt <= head
        passed &= nxt < last
        d = p - self.tail_xy[act]
        release = np.hypot(d[:, 0], d[:, 1]) > self.clearance  # far from the tail
        release &= tail < nxt + passed
        release &= tail < head
        d = p - self.head_xy[act]
        more = np.hypot(d[:, 0], d[:, 1]) < self.lookahead[act]  # short of the head
        more &= head < last
        more &= ~self._asleep[act]
        every = self.positions() if positions is None else positions
        self._xy_now = every
        due = act[passed | release | more]
        # The robots waiting longest ask first (then by index), and robots a freed node wakes
        # ask at once, before the others: a robot merging into a busy lane gets its turn
        # (asked in index order, robots on the lane took every gap, and it starved).
        due = due[np.argsort(self.waiting_since[due], kind="stable")]
        self._woken.clear()
        for i in due.tolist():
            self._advance(i, every[i])
            while self._woken:
                woken = sorted(set(self._woken), key=lambda j: (self.waiting_since[j], j))
                self._woken.clear()
                for j in woken:
                    if self.active[j] and not self._asleep[j]:
                        self._advance(j, every[j])
        if self.passage.holds:
            self.passage.step(self.positions())
        for i in act[self.head[act] == last].tolist():  # (heads as advanced just now)
            if self.next[i] > len(self.routes[i]) - 1 or self.robots[i].is_goal_reached():
                self._arrive(i)
        if self.sim.sim_time >= self._next_check:
            self._next_check = self.sim.sim_time + self.check_period
            find_deadlocks(self)

    def _advance(self, i: int, p: np.ndarray) -> None:
        # Plain floats and ints: this runs for every robot that passes a node or wants one.
        xs, ys = self.graph.xs, self.graph.ys
        px, py = float(p[0]), float(p[1])
        route, last = self.routes[i], len(self.routes[i]) - 1
        nxt, tail, head = int(self.next[i]), int(self.tail[i]), int(self.head[i])
        before = (nxt, tail, head)
        spot = self.lift_rides.spots.get(i) if self.lift_rides.spots else None
        while nxt <= min(head, last - 1):  # passed nodes
            a, b = route[nxt - 1], route[nxt]
            ax, ay = spot.get(a, (xs[a], ys[a])) if spot else (xs[a], ys[a])
            bx, by = spot.get(b, (xs[b], ys[b])) if spot else (xs[b], ys[b])
            if (px - bx) * (bx - ax) + (py - by) * (by - ay) < 0:
                break
            nxt += 1
        self.passed[i] += nxt - int(self.next[i])
        self.next[i] = nxt
        while tail < min(nxt, head):  # nodes left behind
            node = route[tail]
            if math.hypot(px - xs[node], py - ys[node]) <= self.clearance:
                break
            if node not in route[tail + 1 : head + 1]:  # not held again ahead
                self._free(i, node)
            tail += 1
        self.tail[i] = tail
        old_head, reach = head, float(self.lookahead[i])
        while head < last:  # nodes ahead
            here = route[head]
            if math.hypot(px - xs[here], py - ys[here]) >= reach:
                break
            group = self._stretch(i, head + 1)
            refused = next((n for n in group if self.blocker(i, n) >= 0), -1)
            if refused >= 0:
                self._wait(i, refused)
                break
            by = self._in_the_way(i, [here, *group])
            if by >= 0:  # asks again every step (no node of its frees: it drives off)
                self._wait(i, group[0])
                self.giving_way_to[i] = by
                self._asleep[i] = False
                break
            if self.closures.legs and self.closures.refused(i, [here, *group]):
                self._wait(i, group[0])  # a closed lane: waits at its entry until it opens
                break
            if not self.passage.clear(i, [here, *group]):
                break  # a door on the way is not open yet: asked to open, waits short of it
            if not self.lift_rides.clear(i, [here, *group]):
                break  # the lift is not there for it yet (or is carrying it)
            for want in group:
                self.owner[want] = i
            head += len(group)
            self.head[i] = head
            self._wait(i, -1)
        if (nxt, tail, head) != before:  # (a robot refused, or not yet near, changed nothing)
            self._refresh_xy(i)
        if head > old_head:
            self._drive(i, extend_from=old_head)

    def _stretch(self, i: int, k: int) -> list[int]:
        """The nodes robot i must hold together from route index k: a two-way corridor or a
        dead-end spur (nodes with two neighbours or one) is taken whole, with the junction
        beyond it, so two robots never meet head-on inside one."""
        route, last = self.routes[i], int(self.last[i])
        group = [route[k]]
        if k > 0 and self.lift_rides.is_ride(route[k - 1], route[k]):
            return group  # the cabin a ride takes it to: it leaves the cabin when it can
        while k < last and self.two_way[i][k]:
            here, ahead = route[k], route[k + 1]
            if self.lift_rides.is_ride(here, ahead) or self.lift_rides.enters_cabin(i, k + 1):
                break  # a lift ride, and the cabin it starts from, are stretches of their own
            if self.degree[here] > 2 and self.degree[ahead] > 2:
                break
            group.append(ahead)
            k += 1
        return group

    def _in_the_way(self, i: int, way: list[int]) -> int:
        """A robot standing by robot i's `way` after letting a node of it go (`give_way`)."""
        return in_the_way(self, i, way) if self._xy_now is not None else -1

    def waits_for(self, i: int) -> int:
        """The robot robot i waits for: the one holding (or near) the node it was refused, the
        one holding the lift it waits to enter, or the one it gives way to; -1 when none."""
        node = int(self.waiting_on[i])
        if node < 0:
            return -1
        held = self.blocker(i, node)
        if held < 0 and node in self.lift_rides.stops:
            held = self.lift_rides.holder(i)
        return held if held >= 0 else int(self.giving_way_to[i])

    def _wait(self, i: int, node: int) -> None:
        """Robot i is refused `node` (or, with -1, waits for nothing)."""
        self.giving_way_to[i] = -1
        old = int(self.waiting_on[i])
        if old >= 0:
            self._waiters.get(old, set()).discard(i)
        self.waiting_on[i] = node
        self._asleep[i] = node >= 0
        if node < 0:
            self.waiting_since[i] = math.inf
        elif old < 0:
            self.waiting_since[i] = self.sim.sim_time
        if node < 0 and self.closures.waiting:
            self.closures.waiting.pop(i, None)
        if node >= 0:
            self.refusals += old != node
            self._waiters.setdefault(node, set()).add(i)

    def _free(self, i: int, node: int) -> None:
        """Robot i lets `node` go; robots refused a node near it ask again."""
        if self.owner[node] != i:
            return
        if self.lift_rides.spots:
            other = self.lift_rides.co_holder(i, node)
            if other >= 0:  # (a robot riding the cabin with it keeps the cabin's node)
                self.owner[node] = other
                return
        self.owner[node] = -1
        self.left_by[node] = i
        c = self.conflicts
        for near in c.indices[c.indptr[node] : c.indptr[node + 1]].tolist():
            for j in self._waiters.get(near, ()):
                self._asleep[j] = False
                self._woken.append(j)

    def idle_nodes(self) -> set[int]:
        """The nodes robots stand idle on (worked out again only after one started or
        stopped; do not change the set)."""
        if self._idle_cache is None:
            self._idle_cache = set(self.route_end[~self.active].tolist())
        return self._idle_cache

    def _arrive(self, i: int) -> None:
        self.passed[i] += 1
        route = self.routes[i]
        for node in set(route[int(self.tail[i]) : len(route) - 1]) - {route[-1]}:
            self._free(i, node)
        self.routes[i] = [route[-1]]
        self.last[i] = 0
        self._legs_of(i)
        self.tail[i] = self.head[i] = 0
        self.next[i] = 1
        self.active[i] = False
        self._idle_cache = None
        self._wait(i, -1)
        self._refresh_xy(i)
        resume = self.stepping_aside.pop(i, None)
        if resume is not None:  # it stepped aside to undo a deadlock: carry on
            self.send(i, resume)
        elif self.on_arrival is not None:
            self.on_arrival(i)

    # -- deadlocks ----------------------------------------------------------------------------

    def blocker(self, i: int, node: int) -> int:
        """A robot other than i holding `node` or a node in its conflict set, else -1."""
        owner, near = self.owner, self._near
        for e in range(self._near_start[node], self._near_start[node + 1]):
            o = int(owner[near[e]])
            if o >= 0 and o != i:
                if self.lift_rides.sharing and self.lift_rides.mates(i, o, int(near[e])):
                    continue  # (riding one cabin together)
                return o
        return -1

    def held(self, i: int) -> list[int]:
        """The nodes robot i holds: its route from its tail to its head."""
        return self.routes[i][int(self.tail[i]) : int(self.head[i]) + 1]

    # -- helpers ------------------------------------------------------------------------------

    def _drive(self, i: int, extend_from: int | None = None) -> None:
        """Give robot i the path through the nodes it holds ahead (arrays straight to the
        motion tables: this runs whenever a robot gains a node). With `extend_from` (its old
        last held index), the new nodes are appended to the path it is driving."""
        route, nxt, head = self.routes[i], int(self.next[i]), int(self.head[i])
        if nxt > head:
            return  # standing on its last held node
        first = nxt if extend_from is None else max(extend_from + 1, nxt)
        nodes = route[first : head + 1]
        final = head == len(route) - 1
        goal_yaw = float(self.graph.yaw[route[-1]]) if final else math.nan
        align = final and math.isfinite(goal_yaw)
        positions = np.empty((len(nodes), 3))
        positions[:, :2] = self.graph.xy[nodes]
        spot = self.lift_rides.spots.get(i) if self.lift_rides.spots else None
        if spot:  # (its own spot in a cabin it shares)
            for k, node in enumerate(nodes):
                if node in spot:
                    positions[k, :2] = spot[node]
        bodies = self.sim.world.bodies
        positions[:, 2] = bodies["pos"][bodies.row(int(self.handles[i])), 2]
        yaws = np.zeros(len(nodes))
        if align:
            yaws[-1] = goal_yaw
        limits = self.limits[i][first - 1 : head]
        motion = self.sim.world.motion
        if extend_from is not None and first > nxt:
            if motion.extend_path(self._motion[i], positions, yaws, align, ARRIVED_M, limits):
                return
            self._drive(i)  # it had stopped: a fresh path from where it is
            return
        motion.set_path(self._motion[i], positions, yaws, align, ARRIVED_M, limits)

    def _legs_of(self, i: int) -> None:
        """Speed limit, two-way flag and length of each leg of robot i's route."""
        route = self.routes[i]
        self.route_end[i] = route[-1] if route else -1
        if len(route) < 2:
            self.limits[i], self.two_way[i] = np.empty(0), []
            self._rest[i] = np.zeros(max(len(route), 1))
            return
        legs = self.graph.legs(np.array(route, dtype=np.int64))
        self.limits[i] = np.asarray(self.graph.speed_limit[legs], dtype=np.float64)
        self.two_way[i] = self.graph.bidirectional[legs].tolist()
        length = np.asarray(self.graph.lane_length[legs], dtype=np.float64)
        self._rest[i] = np.append(np.cumsum(length[::-1])[::-1], 0.0)

    def _refresh_xy(self, i: int) -> None:
        route, xs, ys = self.routes[i], self.graph.xs, self.graph.ys
        nxt = min(int(self.next[i]), len(route) - 1)
        a, b = route[max(nxt - 1, 0)], route[nxt]
        t, h = route[int(self.tail[i])], route[int(self.head[i])]
        if self.lift_rides.spots and i in self.lift_rides.spots:  # (a spot in a shared cabin)
            at = self.node_xy
            self._nodes_xy[i] = (*at(i, a), *at(i, b), *at(i, t), *at(i, h))
        else:
            self._nodes_xy[i] = (xs[a], ys[a], xs[b], ys[b], xs[t], ys[t], xs[h], ys[h])
        rest = self._rest[i]
        self.ahead_m[i] = rest[min(nxt, len(rest) - 1)]

    def _footprint_radius(self) -> float:
        bodies = self.sim.world.bodies
        rows = bodies.rows(self.handles)
        return float(bodies.footprint_radii(rows).max()) if len(rows) else 0.0
