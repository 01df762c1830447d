"""`FleetManager`: the reference fleet manager. It releases tasks as their time comes, assigns
them to idle robots (a policy you can replace), drives the robots under `TrafficControl`, works
at each place (pick-up and drop-off times), moves idle robots out of the way when they block
someone, and keeps the robots' states and the fleet's KPIs.

Robot states: idle, moving, waiting (held by traffic control), working (at a place), charging,
failed; the time each robot spends in each is kept. The per-step work is array operations;
only robots that arrive, finish work or are assigned do Python work.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.collision.kinds import pair_kinds
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.assignment import AssignmentPolicy, policy_of
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.fleet.kpis import fleet_kpis, fleet_tables, series_row
from fleetsim.fleet.near_miss import NearMisses
from fleetsim.fleet.stalls import STALL_AFTER_S, StallWatch
from fleetsim.fleet.states import RobotState
from fleetsim.fleet.tasks import Task, TaskStatus, check_tasks
from fleetsim.fleet.traffic import TrafficControl

NEAR_MISS_EVERY_S = 0.25
PARK_RETRY_S = 1.0  # how often robots with nothing to do off a parking spot look for one


class FleetManager:
    """Run `tasks` (a list or a stream, ordered by release time) with `robots` on the
    simulation's site. Call `step()` once per simulation step (or `attach()` to have the
    simulation call it). `assignment` is "nearest", "greedy" or your own policy object."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Agent],
        tasks: Iterable[Task],
        assignment: str | AssignmentPolicy = "nearest",
        pick_time: float = 5.0,
        drop_time: float = 5.0,
        traffic: TrafficControl | None = None,
        battery: BatteryParams | None = None,
        series_every: float = 60.0,
        park: bool = True,
        near_miss_gap: float = 0.2,
        max_active: int | None = None,
        stall_after_s: float = STALL_AFTER_S,
    ) -> None:
        self.sim = sim
        self.robots = list(robots)
        self.traffic = traffic if traffic is not None else TrafficControl(sim, self.robots)
        self.graph = self.traffic.graph
        self.policy = policy_of(assignment)
        self.pick_time, self.drop_time = float(pick_time), float(drop_time)
        self._source: Iterator[Task] = iter(tasks)
        self._upcoming: Task | None = None
        self.tasks: list[Task] = []  # every task released so far, in order
        self.queue: list[Task] = []  # released, not assigned
        r = len(self.robots)
        self.job: list[Task | None] = [None] * r
        self.has_job = np.zeros(r, dtype=bool)  # job[i] is not None, as an array
        self.leg = np.zeros(r, dtype=np.int64)  # index of the place being driven to
        self.work_until = np.full(r, math.inf)
        self.state = np.zeros(r, dtype=np.int64)
        self.time_in_state = np.zeros((r, len(RobotState)))
        self._time_flat = self.time_in_state.reshape(-1)  # (a view: one gather-add a step)
        self._state_base = np.arange(r) * len(RobotState)
        self.distance = np.zeros(r)
        self._last_xy = self.positions().copy()
        self._arrived: list[int] = []
        self.traffic.on_arrival = self._arrived.append
        self.traffic.on_deadlock = self._unjam
        self._callback: int | None = None
        self.failed = np.zeros(r, dtype=bool)
        self.to_charger = np.full(r, -1, dtype=np.int64)  # the charger a robot is bound for
        self.to_park = np.full(r, -1, dtype=np.int64)  # the parking spot a robot is bound for
        spots = self.graph.nodes_with("parking_spot") if park else []
        self.parking = [self.graph.node(n) for n in spots]
        self._is_spot = np.zeros(len(self.graph), dtype=bool)
        self._is_spot[self.parking] = True
        # At most this many robots work on tasks at once: a site packed with moving robots
        # gridlocks (a loop of one-way lanes full of robots waiting on each other), so the
        # default leaves about five lane nodes (all but parking spots) to each.
        lanes = len(self.graph) - len(self.graph.nodes_with("parking_spot"))
        self.max_active = int(max_active) if max_active is not None else max(1, lanes // 5)
        if self.max_active < 1:
            raise ConfigError(f"max_active must be >= 1, got {max_active}")
        self._next_park = 0.0
        self._park_retry = np.zeros(r)  # when a robot off a parking spot may look again
        self._park_tries = np.zeros(r, dtype=np.int64)
        self.charges = 0  # charging sessions started
        self.batteries = Batteries(battery, r) if battery is not None else None
        self.collisions: list[dict[str, Any]] = []  # time, kind, bodies and place of each
        obstacles = sim.site.obstacles if sim.site is not None else None
        self.near_misses = NearMisses(  # robots within near_miss_gap of a robot or the structure
            [a.name for a in self.robots], self.traffic.radius, near_miss_gap, obstacles
        )
        self._next_near = 0.0
        if not (isinstance(stall_after_s, int | float) and stall_after_s > 0):
            raise ConfigError(f"stall_after_s: expected seconds > 0, got {stall_after_s!r}")
        self.stalls = StallWatch(r, stall_after_s)  # robots whose task stopped advancing
        self.series: list[dict[str, Any]] = []  # KPI snapshots every `series_every` seconds
        self.series_every = float(series_every)
        self._next_sample = self.series_every
        sim.on("collision_started", self._on_collision)
        if self.batteries is not None:
            self._check_chargers()

    # -- running ------------------------------------------------------------------------------

    def attach(self) -> FleetManager:
        """Have the simulation call `step()` every step."""
        if self._callback is None:
            self._callback = self.sim.register_callback(lambda *_: self.step())
        return self

    def positions(self) -> np.ndarray:
        """Robot positions (R, 2) now."""
        return self.traffic.positions()

    def step(self) -> None:
        dt, now = self.sim.params.timestep, self.sim.sim_time
        xy = self.traffic.positions()  # (nothing below moves a robot: the same all step)
        self.traffic.step(xy)
        self._release(now)
        arrived, self._arrived[:] = list(self._arrived), []
        for i in arrived:
            self._at_place(i, now)
        for i in (self.work_until <= now).nonzero()[0].tolist():
            self._work_done(i, now)
        if self.batteries is not None:
            self._charging_rounds()
        if self.queue:
            working = int(np.count_nonzero(self.has_job))
            if working < self.max_active:
                idle = self._free().nonzero()[0].tolist()
                if idle:
                    self._assign(idle, now, self.max_active - working)
        for waiting, blocker in self.traffic.blocked_by_idle:
            self._make_way(blocker, waiting)
        self.traffic.blocked_by_idle = []
        if self.parking and now >= self._next_park:
            self._next_park = now + PARK_RETRY_S
            self._park_strays()
        self._account(dt, xy)
        self.stalls.check(self, now)

    # -- tasks --------------------------------------------------------------------------------

    def _release(self, now: float) -> None:
        while True:
            if self._upcoming is None:
                self._upcoming = next(self._source, None)
                if self._upcoming is None:
                    return
                check_tasks([self._upcoming], self.graph)
            if self._upcoming.release_time > now:
                return
            task, self._upcoming = self._upcoming, None
            task.mark(TaskStatus.RELEASED, now)
            self.tasks.append(task)
            self.queue.append(task)

    def _assign(self, idle: list[int], now: float, room: int) -> None:
        """Offer the policy the idle robots and the first `room` tasks of the queue (by
        priority, then release time)."""
        self.queue.sort(key=lambda t: (-t.priority, t.release_time))
        try:
            pairs = list(self.policy.assign(self, idle, self.queue[:room]))
        except Exception as exc:
            raise FleetSimError(
                f"assignment policy {type(self.policy).__name__} raised at t={now:.1f} s "
                f"({len(idle)} idle robots, {len(self.queue)} tasks waiting): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        for i, task in pairs:
            if not self._is_free(i) or task not in self.queue:
                raise FleetSimError(
                    f"assignment policy {type(self.policy).__name__} gave robot {i} and task "
                    f"{task.id}: the robot must be idle and the task waiting"
                )
            self.queue.remove(task)
            self.to_park[i] = -1
            task.robot = self.robots[i].name
            task.mark(TaskStatus.ASSIGNED, now)
            self.job[i] = task
            self.has_job[i] = True
            self.leg[i] = 0
            self.stalls.advanced(i, now)
            self._go(i, now)

    def _go(self, i: int, now: float) -> None:
        task = self.job[i]
        assert task is not None
        place = task.places[int(self.leg[i])]
        try:
            self.stalls.bound_for(i, self.graph.node(place))
            self.traffic.send(i, place)
        except FleetSimError as exc:
            self._fail(i, now, str(exc))

    def _at_place(self, i: int, now: float) -> None:
        task = self.job[i]
        self.stalls.advanced(i, now)
        self.to_park[i] = -1
        self._park_retry[i] = 0.0  # somewhere new: a stray unless it is a parking spot
        if task is None:
            if self.to_charger[i] >= 0 and self.batteries is not None:
                self.batteries.charging[i] = True
                self.charges += 1
            return  # or it made way for someone: free again
        k, last = int(self.leg[i]), len(task.places) - 1
        if k == 0:
            task.mark(TaskStatus.STARTED, now)
        dwell = 0.0
        if task.kind == "delivery":
            dwell = self.pick_time if k == 0 else self.drop_time if k == last else 0.0
        self.work_until[i] = now + dwell

    def _work_done(self, i: int, now: float) -> None:
        self.work_until[i] = math.inf
        self.stalls.advanced(i, now)
        task = self.job[i]
        if task is None:
            return
        if int(self.leg[i]) == len(task.places) - 1:
            task.mark(TaskStatus.DONE, now)
            self.job[i] = None
            self.has_job[i] = False
            self._park(i)
            return
        self.leg[i] += 1
        self._go(i, now)

    def _fail(self, i: int, now: float, reason: str) -> None:
        task = self.job[i]
        if task is not None:
            task.reason = reason
            task.mark(TaskStatus.FAILED, now)
        self.job[i] = None
        self.has_job[i] = False

    def _free(self) -> np.ndarray:
        """`_is_free` of every robot, as a bool array."""
        free = ~self.has_job & (~self.traffic.active | (self.to_park >= 0))
        free &= (self.work_until == math.inf) & (self.to_charger < 0) & ~self.failed
        if self.batteries is not None:
            free &= self.batteries.soc >= self.batteries.params.low
        return free

    def _is_free(self, i: int) -> bool:
        """No task, not driving (but for going to park), working, charging or failed, and
        charged enough to work."""
        return (
            self.job[i] is None
            and (not self.traffic.active[i] or self.to_park[i] >= 0)
            and self.work_until[i] == math.inf
            and self.to_charger[i] < 0
            and not self.failed[i]
            and (self.batteries is None or self.batteries.soc[i] >= self.batteries.params.low)
        )

    def _park(self, i: int, avoid: set[int] | None = None) -> bool:
        """Send a robot that has nothing to do to the nearest free parking spot it can reach
        without passing a robot standing idle or bound for a spot, unless it is on one."""
        here = self.traffic.node_of(i)
        if not self.parking or (avoid is None and self._is_spot[here]):
            return False
        claimed = set(self.to_park[self.to_park >= 0].tolist()) | set(
            self.to_charger[self.to_charger >= 0].tolist()
        )
        t = self.traffic
        # not through a robot that stands, or will stand, on its way (one parked in a column)
        others = (t.idle_nodes() | claimed | (avoid or set())) - {here}
        spots = np.asarray(self.parking)
        spots = spots[np.argsort(np.hypot(*(self.graph.xy[spots] - self.graph.xy[here]).T))]
        near = [p for p in spots.tolist() if p not in claimed and p not in others and p != here]
        hop = self.graph.typical_lane_length
        for spot in near[:5]:
            # a way round the others is near or not worth it: search a few times the distance
            far = float(np.hypot(*(self.graph.xy[spot] - self.graph.xy[here]))) / max(hop, 1e-6)
            try:
                t.send(i, spot, avoid=sorted(others), max_expansions=int(8 * far) + 64)
            except FleetSimError:
                continue
            self.to_park[i] = spot
            return True
        return False

    def _park_strays(self) -> None:
        """Robots left with nothing to do off a parking spot (no spot was free when they
        finished, or they made way) try again: an idle robot must not block a lane."""
        now = self.sim.sim_time
        stray = self._free() & ~self.traffic.active & (self._park_retry <= now)
        for i in np.flatnonzero(stray).tolist():
            if self._is_spot[self.traffic.node_of(i)]:
                self._park_retry[i] = math.inf  # parked: looked at again when it next arrives
                continue
            if self._park(i):
                self._park_tries[i] = 0
            else:  # no way yet: back off (1, 2, 4 .. 16 s) while the traffic moves
                self._park_retry[i] = now + min(2.0 ** self._park_tries[i], 16.0)
                self._park_tries[i] += 1

    def _unjam(self, members: list[int]) -> bool:
        """A deadlock traffic control could not undo: a robot of it with no task (parking or
        making way) takes another parking spot, round the others."""
        t = self.traffic
        blocked = {n for j in members for n in t.route_ahead(j)[: int(t.head[j] - t.tail[j]) + 1]}
        blocked |= {int(t.waiting_on[j]) for j in members if t.waiting_on[j] >= 0}
        for i in members:
            if self.job[i] is None and self.to_charger[i] < 0:
                mine = set(t.route_ahead(i)[: int(t.head[i] - t.tail[i]) + 1])
                if self._park(i, avoid=blocked - mine):
                    return True
        return False

    # -- batteries ----------------------------------------------------------------------------

    def _check_chargers(self) -> None:
        chargers = [self.graph.node(n) for n in self.graph.nodes_with("charger")]
        if not chargers:
            raise ConfigError("batteries need chargers: flag nodes with charger: true")
        for i, robot in enumerate(self.robots):
            here = self.traffic.node_of(i)
            if not any(self._reachable(here, c) for c in chargers):
                raise ConfigError(
                    f"{robot.name} (at node '{self.graph.names[here]}') has no route to a charger"
                )
        self.chargers = chargers

    def _reachable(self, a: int, b: int) -> bool:
        try:
            self.graph.route(a, b)
        except FleetSimError:
            return False
        return True

    def _charging_rounds(self) -> None:
        b = self.batteries
        assert b is not None
        for i in np.flatnonzero(b.charging & (b.soc >= b.params.resume)).tolist():
            b.charging[i] = False
            self.to_charger[i] = -1  # charged: free for work again
        low = (b.soc < b.params.low) & (self.to_charger < 0) & ~self.failed
        for i in np.flatnonzero(low).tolist():
            idle = not self.traffic.active[i] and self.work_until[i] == math.inf
            if self.job[i] is None and idle:
                self._go_charge(i)

    def _go_charge(self, i: int) -> None:
        """To the nearest charger no other robot holds or is bound for."""
        claimed = set(self.to_charger[self.to_charger >= 0].tolist())
        here = self.positions()[i]
        free = [c for c in self.chargers if c not in claimed and self.traffic.is_free_for(i, c)]
        free.sort(key=lambda c: float(np.hypot(*(self.graph.xy[c] - here))))
        for charger in free:
            try:
                self.traffic.send(i, charger)
            except FleetSimError:
                continue
            self.to_charger[i] = charger
            return

    def _run_empty(self, i: int, now: float) -> None:
        self.failed[i] = True
        self.traffic.halt(i)
        self.robots[i].stop()
        self._fail(i, now, f"{self.robots[i].name} ran out of battery")

    def _make_way(self, idle: int, waiting: int) -> None:
        """Send an idle robot that blocks another to a free node off the other's route, or
        failing that to a parking spot."""
        if not self._is_free(idle):
            return
        t = self.traffic
        keep_clear = set(t.route_ahead(waiting))
        start = t.node_of(idle)
        frontier, seen = [start], {start}
        for _ in range(6):  # a few lanes away at most
            nxt = []
            for u in frontier:
                for v in self.graph.successors(u):
                    if v in seen:
                        continue
                    seen.add(v)
                    if v not in keep_clear and t.is_free_for(idle, v):
                        try:
                            t.send(idle, v)
                        except FleetSimError:
                            continue
                        return
                    nxt.append(v)
            frontier = nxt
        self._park(idle, avoid=set())  # nowhere near: a parking spot (another, if on one)

    # -- bookkeeping --------------------------------------------------------------------------

    def _on_collision(self, a: Any, b: Any) -> None:
        """Record when, where and between what (robots only see these in a bad run)."""
        if a is None or b is None:
            return
        bodies = self.sim.world.bodies
        try:
            rows = bodies.rows([a.handle, b.handle])
        except (KeyError, IndexError, ValueError):
            return  # removed in the same step
        (kind,) = pair_kinds(bodies, rows[:1], rows[1:])
        x, y = bodies["pos"][rows, :2].mean(axis=0).tolist()
        self.collisions.append(
            {"time": self.sim.sim_time, "kind": kind, "a": a.name, "b": b.name, "x": x, "y": y}
        )

    def _account(self, dt: float, xy: np.ndarray) -> None:
        """States, time in each and distance driven, for the step that just ended with the
        robots at `xy` (R, 2); near misses and KPI series when due."""
        active = self.traffic.active
        state = np.zeros(len(self.robots), dtype=np.int64)  # (RobotState.IDLE is 0)
        state[active] = int(RobotState.MOVING)
        state[active & (self.traffic.waiting_on >= 0)] = int(RobotState.WAITING)
        state[self.work_until < math.inf] = int(RobotState.WORKING)  # (never NaN)
        if self.batteries is not None:
            state[self.batteries.charging] = int(RobotState.CHARGING)
        state[self.failed] = int(RobotState.FAILED)
        self.state = state
        self._time_flat[self._state_base + state] += dt  # time_in_state[robot, state]
        d = xy - self._last_xy
        driven = np.hypot(d[:, 0], d[:, 1])
        self.distance += driven
        self._last_xy = xy
        if self.batteries is not None:
            busy = (state != RobotState.IDLE) & (state != RobotState.CHARGING)
            for i in self.batteries.update(dt, driven, busy).nonzero()[0].tolist():
                self._run_empty(i, self.sim.sim_time)
        if self.sim.sim_time >= self._next_near:
            self._next_near = self.sim.sim_time + NEAR_MISS_EVERY_S
            self.near_misses.check(self.sim.sim_time, xy)
        if self.sim.sim_time >= self._next_sample - 1e-9:
            self._next_sample += self.series_every
            self.series.append(series_row(self))

    def kpis(self) -> dict[str, Any]:
        """The fleet's numbers so far (see `fleetsim.fleet.kpis.fleet_kpis`)."""
        return fleet_kpis(self)

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Per-robot and per-task rows (see `fleetsim.fleet.kpis.fleet_tables`)."""
        return fleet_tables(self)
