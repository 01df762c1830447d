"""`FleetManager`: the reference fleet manager. It releases tasks as their time comes, assigns
them to idle robots (a policy you can replace), drives the robots under `TrafficControl`, works
at each place (pick-up and drop-off times), moves idle robots out of the way when they block
someone, and keeps the robots' states and the fleet's KPIs.

Robot states: idle, moving, waiting (held by traffic control), working (at a place), charging,
failed; the time each robot spends in each is kept. The per-step work is array operations;
only robots that arrive, finish work or are assigned do Python work.

The manager itself runs tasks on robots (assignment, legs, work at places); each other idea is
a part with its own state: `book` (the tasks, `TaskBook`), `parking` (`Parking`), `charging`
(`Charging`), `accounts` (states, times, distance: `RobotAccounts`), `collision_log`,
`near_misses`, `stalls` and `kpi_series`. `kpis()` and `tables()` ask each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.accounts import CollisionLog, RobotAccounts
from fleetsim.fleet.assignment import AssignmentPolicy, policy_of
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.fleet.charging import Charging
from fleetsim.fleet.kpis import KpiSeries, fleet_kpis, fleet_tables
from fleetsim.fleet.near_miss import NearMisses
from fleetsim.fleet.parking import Parking
from fleetsim.fleet.stalls import STALL_AFTER_S, StallWatch
from fleetsim.fleet.states import RobotState
from fleetsim.fleet.task_book import TaskBook
from fleetsim.fleet.tasks import Task, TaskStatus
from fleetsim.fleet.traffic import TrafficControl
from fleetsim.geometry.vectors import any_set

# New tasks wait while a robot has waited CONGESTED_WAIT_S for a node, or more than
# CONGESTED_SHARE of the robots on the move (at least CONGESTED_MIN) wait: `_congested`.
CONGESTED_SHARE = 0.15
CONGESTED_MIN = 20
CONGESTED_WAIT_S = 30.0
# Robots sent out a second: at least DISPATCH_MIN_PER_S, and this share of `max_active`.
DISPATCH_MIN_PER_S = 2.0
DISPATCH_SHARE_PER_S = 0.005
OFFERED_MIN = 16  # the policy chooses from at least this many waiting tasks (when there are)


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
        dispatch_per_s: float | None = None,
    ) -> None:
        self.sim = sim
        self.robots = list(robots)
        self.traffic = traffic if traffic is not None else TrafficControl(sim, self.robots)
        self.graph = self.traffic.graph
        self.policy = policy_of(assignment)
        self.pick_time, self.drop_time = float(pick_time), float(drop_time)
        self.book = TaskBook(tasks, self.graph)
        r = len(self.robots)
        self.job: list[Task | None] = [None] * r
        self.has_job = np.zeros(r, dtype=bool)  # job[i] is not None, as an array
        self.leg = np.zeros(r, dtype=np.int64)  # index of the place being driven to
        self.work_until = np.full(r, math.inf)
        self.failed = np.zeros(r, dtype=bool)  # ran empty
        self.accounts = RobotAccounts(self.positions())
        self._arrived: list[int] = []
        self.traffic.on_arrival = self._arrived.append
        self.traffic.on_deadlock = self._unjam
        self._callback: int | None = None
        self.parking = Parking(self.traffic, park)
        # At most this many robots work on tasks at once: a site packed with moving robots
        # gridlocks (a loop of one-way lanes full of robots waiting on each other), so the
        # default leaves about five lane nodes (all but parking spots) to each.
        lanes = len(self.graph) - len(self.graph.nodes_with("parking_spot"))
        self.max_active = int(max_active) if max_active is not None else max(1, lanes // 5)
        if self.max_active < 1:
            raise ConfigError(f"max_active must be >= 1, got {max_active}")
        # New tasks start at most this often (per second; a token bucket of a second's worth).
        if dispatch_per_s is not None and not (
            math.isfinite(dispatch_per_s) and dispatch_per_s > 0
        ):
            raise ConfigError(f"dispatch_per_s must be a number > 0, got {dispatch_per_s!r}")
        self.dispatch_per_s = (
            float(dispatch_per_s)
            if dispatch_per_s is not None
            else max(DISPATCH_MIN_PER_S, DISPATCH_SHARE_PER_S * self.max_active)
        )
        self._tokens = self.dispatch_per_s
        self.collision_log = CollisionLog(sim)
        obstacles = sim.site.obstacles if sim.site is not None else None
        self.near_misses = NearMisses(  # robots within near_miss_gap of a robot or the structure
            [a.name for a in self.robots], self.traffic.radius, near_miss_gap, obstacles
        )
        if not (isinstance(stall_after_s, int | float) and stall_after_s > 0):
            raise ConfigError(f"stall_after_s: expected seconds > 0, got {stall_after_s!r}")
        self.stalls = StallWatch(r, stall_after_s)  # robots whose task stopped advancing
        self.traffic.on_detour = self.stalls.detour
        self.kpi_series = KpiSeries(series_every)  # snapshots every `series_every` seconds
        self.charging = Charging(battery, self.traffic, [a.name for a in self.robots])

    # -- the parts, by the names they had ------------------------------------------------------

    @property
    def tasks(self) -> list[Task]:
        """Every task released so far, in order."""
        return self.book.tasks

    @property
    def queue(self) -> list[Task]:
        """Tasks released and not assigned yet."""
        return self.book.queue

    @property
    def state(self) -> np.ndarray:
        """Each robot's `RobotState` now, (R,)."""
        return self.accounts.state

    @property
    def time_in_state(self) -> np.ndarray:
        """Seconds each robot spent in each state, (R, states)."""
        return self.accounts.time_in_state

    @property
    def distance(self) -> np.ndarray:
        """Metres each robot drove, (R,)."""
        return self.accounts.distance

    @property
    def batteries(self) -> Batteries | None:
        """The robots' batteries (None when off)."""
        return self.charging.batteries

    @property
    def series(self) -> list[dict[str, Any]]:
        """The KPI snapshots so far (the list grows as the run goes on)."""
        return self.kpi_series.rows

    @property
    def collisions(self) -> list[dict[str, Any]]:
        """Time, kind, bodies and place of each collision that began."""
        return self.collision_log.records

    # -- running ------------------------------------------------------------------------------

    def attach(self) -> FleetManager:
        """Have the simulation call `step()` every step."""
        if self._callback is None:
            self._callback = self.sim.register_callback(lambda *_: self.step())
        return self

    def positions(self) -> np.ndarray:
        """Robot positions (R, 2) now."""
        return self.traffic.positions()

    def close_lane(self, a: str | int, b: str | int) -> list[str]:
        """Close the lane from node `a` to node `b` (a blocked aisle) until `open_lane`: routes
        go round it, robots that were to drive it are sent round (where only it leads to a
        place, they wait at its entry), none is let onto it. Returns the robots sent round."""
        sent = self.traffic.closures.close(self.graph.lane(a, b))
        return [self.robots[i].name for i in sent]

    def open_lane(self, a: str | int, b: str | int) -> None:
        """Open a lane `close_lane` closed; the robots waiting at it drive on."""
        self.traffic.closures.reopen(self.graph.lane(a, b))

    def step(self) -> None:
        """One step of the fleet: traffic, releases, arrivals, work, charging, assignment,
        making way, parking, then the accounts."""
        dt, now = self.sim.params.timestep, self.sim.sim_time
        xy = self.traffic.positions()  # (nothing below moves a robot: the same all step)
        self.traffic.step(xy)
        self.book.release(now)
        arrived, self._arrived[:] = list(self._arrived), []
        for i in arrived:
            self._at_place(i, now)
        for i in (self.work_until <= now).nonzero()[0].tolist():
            self._work_done(i, now)
        if self.charging.on:
            idle = ~self.has_job & ~self.traffic.active & (self.work_until == math.inf)
            self.charging.rounds(idle, self.failed)
        if self.book.queue:
            working = int(np.count_nonzero(self.has_job))
            # Robots go out at most at `dispatch_per_s` (a burst after a jam would refill the
            # lanes at once), and not while they are congested.
            self._tokens = min(self._tokens + self.dispatch_per_s * dt, self.dispatch_per_s)
            room = min(self.max_active - working, len(self.book.queue))
            go = min(room, int(self._tokens))
            # (in batches of up to a second's worth: a policy asked every step would compare
            # every idle robot with the queue every step)
            if go > 0 and go >= min(room, int(self.dispatch_per_s)) and not self._congested():
                idle_robots = self._free().nonzero()[0].tolist()
                if idle_robots:
                    self._assign(idle_robots, now, min(room, max(4 * go, OFFERED_MIN)), go)
                    self._tokens -= int(np.count_nonzero(self.has_job)) - working
        for waiting, blocker in self.traffic.blocked_by_idle:
            if self._is_free(blocker):
                self.parking.make_way(blocker, waiting, self._charger_claims())
        self.traffic.blocked_by_idle = []
        if self.parking.due(now):
            self.parking.strays(self._free(), now, self._charger_claims())
        self._account(dt, xy)
        self.stalls.check(self, now)

    def _congested(self) -> bool:
        """Whether the lanes are too full to send more robots out: a queue has not moved for
        `CONGESTED_WAIT_S` (a robot has waited that long for a node), or more than
        `CONGESTED_SHARE` of the robots on the move wait. A site fed faster than its lanes
        carry gridlocks; orders then wait in the queue until the traffic thins."""
        t = self.traffic
        if any_set(t.waiting_since < self.sim.sim_time - CONGESTED_WAIT_S):
            return True
        moving = int(np.count_nonzero(t.active))
        waiting = int(np.count_nonzero(t.waiting_on >= 0))
        return moving >= CONGESTED_MIN and waiting > CONGESTED_SHARE * moving

    # -- tasks --------------------------------------------------------------------------------

    def _assign(self, idle: list[int], now: float, room: int, go: int) -> None:
        """Offer the policy the idle robots and the first `room` tasks of the queue (by
        priority, then release time); the first `go` pairs it gives start now (the policy
        sees every task it may choose from: the others stay queued)."""
        offered = self.book.first(room)
        try:
            pairs = list(self.policy.assign(self, idle, offered))[:go]
        except Exception as exc:
            raise FleetSimError(
                f"assignment policy {type(self.policy).__name__} raised at t={now:.1f} s "
                f"({len(idle)} idle robots, {len(self.book.queue)} tasks waiting): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        for i, task in pairs:
            if not self._is_free(i) or task not in self.book.queue:
                raise FleetSimError(
                    f"assignment policy {type(self.policy).__name__} gave robot {i} and task "
                    f"{task.id}: the robot must be idle and the task waiting"
                )
            self.book.assign(task, self.robots[i].name, now)
            self.parking.bound[i] = -1
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
        self.parking.arrived(i)
        if task is None:
            self.charging.arrived(i)
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
            self.parking.send(i, self._charger_claims())
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
        free = ~self.has_job & (~self.traffic.active | (self.parking.bound >= 0))
        free &= (self.work_until == math.inf) & (self.charging.bound < 0) & ~self.failed
        if self.charging.on:
            free &= ~self.charging.low()
        return free

    def _is_free(self, i: int) -> bool:
        """No task, not driving (but for going to park), working, charging or failed, and
        charged enough to work."""
        b = self.charging.batteries
        return (
            self.job[i] is None
            and (not self.traffic.active[i] or self.parking.bound[i] >= 0)
            and self.work_until[i] == math.inf
            and self.charging.bound[i] < 0
            and not self.failed[i]
            and (b is None or b.soc[i] >= b.params.low)
        )

    def _charger_claims(self) -> set[int]:
        """The chargers robots are bound for or charging at (parking keeps clear of them)."""
        bound = self.charging.bound
        return set(bound[bound >= 0].tolist())

    def _unjam(self, members: list[int]) -> bool:
        """A deadlock traffic control could not undo: a robot of it with no task (parking or
        making way) takes another parking spot, round the others."""
        t = self.traffic
        blocked = {n for j in members for n in t.route_ahead(j)[: int(t.head[j] - t.tail[j]) + 1]}
        blocked |= {int(t.waiting_on[j]) for j in members if t.waiting_on[j] >= 0}
        for i in members:
            if self.job[i] is None and self.charging.bound[i] < 0:
                mine = set(t.route_ahead(i)[: int(t.head[i] - t.tail[i]) + 1])
                if self.parking.send(i, self._charger_claims(), avoid=blocked - mine):
                    return True
        return False

    def _run_empty(self, i: int, now: float) -> None:
        self.failed[i] = True
        self.traffic.halt(i)
        self.robots[i].stop()
        self._fail(i, now, f"{self.robots[i].name} ran out of battery")

    # -- bookkeeping --------------------------------------------------------------------------

    def _account(self, dt: float, xy: np.ndarray) -> None:
        """States, time in each and distance driven, for the step that just ended with the
        robots at `xy` (R, 2); batteries, near misses and the KPI series when due."""
        active = self.traffic.active
        state = np.zeros(len(self.robots), dtype=np.int64)  # (RobotState.IDLE is 0)
        state[active] = int(RobotState.MOVING)
        state[active & (self.traffic.waiting_on >= 0)] = int(RobotState.WAITING)
        state[self.work_until < math.inf] = int(RobotState.WORKING)  # (never NaN)
        if self.charging.batteries is not None:
            state[self.charging.batteries.charging] = int(RobotState.CHARGING)
        state[self.failed] = int(RobotState.FAILED)
        driven = self.accounts.account(dt, xy, state)
        now = self.sim.sim_time
        if self.charging.on:
            busy = (state != RobotState.IDLE) & (state != RobotState.CHARGING)
            for i in self.charging.drain(dt, driven, busy):
                self._run_empty(i, now)
        self.near_misses.every(now, xy)
        self.kpi_series.sample(now, self)

    def kpis(self) -> dict[str, Any]:
        """The fleet's numbers so far (see `fleetsim.fleet.kpis.fleet_kpis`)."""
        return fleet_kpis(self)

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Per-robot and per-task rows (see `fleetsim.fleet.kpis.fleet_tables`)."""
        return fleet_tables(self)
