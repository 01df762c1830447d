"""`FaultInjector`: a `FaultPlan` applied to a simulation, step by step.

At the start of each step (the `pre_step` event) the faults due begin and those whose time is
up end. Robot faults act through the robot's fault speed factor (`Agent.set_fault_speed`): a
stop, a breakdown and a delay hold it at 0, a slow-down at its factor (the smallest factor of
the faults on a robot wins); a jump moves the robot's reported pose (`reported_offset`, which
the interfaces add to what they report), not its body; a battery spike drains the fleet
manager's battery model at once. Site faults act through the devices: a door stuck open or
closed (`Doors.stick`), a lift out of service (`Lifts.set_in_service`), a charger down (the
fleet manager sends nobody there, and who charges there stops), a lane blocked (a box on it,
`LaneBlockage`, and the lane closed to the fleet manager's routes). Every fault is a row of
`records` and the events `fault_started` and `fault_ended` with the row.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError
from fleetsim.faults.blockage import LaneBlockage
from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.kinds import TABLE
from fleetsim.faults.plan import KINDS, FaultEvent, FaultPlan, FaultSchedule
from fleetsim.fleet.manager import FleetManager
from fleetsim.fleet.tasks import Task


class FaultInjector:
    """Applies `plan` to `robots` of `sim` (and, for battery and charger faults, the fleet
    `manager`'s batteries and chargers); `delays` adds execution delays drawn per step. What
    each kind of fault does is its entry in `fleetsim.faults.kinds.TABLE`."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Agent],
        plan: FaultPlan,
        manager: FleetManager | None = None,
        delays: DelayConfig | None = None,
    ) -> None:
        self.sim, self.robots, self.plan, self.manager = sim, list(robots), plan, manager
        names = [r.name for r in self.robots]
        self.index = {name: i for i, name in enumerate(names)}
        self._check_targets(plan)
        self.schedule = FaultSchedule(plan, names, self._site_targets(plan))
        self.delays = DelayGenerator(delays, len(names)) if delays and delays.p > 0 else None
        r = len(names)
        self.reported_offset = np.zeros((r, 2))  # what a jump adds to the reported position
        self.broken = np.zeros(r, dtype=bool)
        self.records: list[dict[str, Any]] = []
        self.speeds: list[dict[int, float]] = [{} for _ in range(r)]  # robot: fault -> factor
        self.blocks: dict[int, LaneBlockage] = {}  # key -> a lane's box, while it is blocked
        self._ends: list[tuple[float, int, FaultEvent]] = []  # (end, key, event)
        self._open: dict[int, dict[str, Any]] = {}  # key -> the row of a fault going on
        self._seq = itertools.count()
        self._hook: Any = None
        self.origin = 0.0  # the simulated time the plan's times count from (`restart`)
        # faults other parts inject (an interface's lost messages) are rows here too
        self._heard = sim.on("fault_started", lambda _s, row: self._external(row))

    def _external(self, row: dict[str, Any]) -> None:
        if row.get("by"):
            self.records.append({k: v for k, v in row.items() if k != "by"})

    def _check_targets(self, plan: FaultPlan) -> None:
        for fault in plan.site:
            TABLE[fault.kind].check(self, fault.target)
        for random in plan.site_random:
            for target in random.targets or ():
                TABLE[random.kind].check(self, target)
        for demand in plan.demand:
            TABLE[demand.kind].check(self, demand.target)
        batteries = any(p.kind == "battery" for p in plan.robots) or any(
            e.kind == "battery" for e in plan.events
        )
        if batteries and (self.manager is None or not self.manager.charging.on):
            raise ConfigError("battery faults need a fleet manager with batteries")
        for event in plan.events:
            kind = TABLE.get(event.kind)
            if kind is None:
                raise ConfigError(
                    f"fault event kind {event.kind!r}: expected one of {', '.join(KINDS)}"
                )
            if kind.touches == "robot":
                if event.target not in self.index:
                    raise ConfigError(
                        f"a {event.kind} fault at {event.time:g} s names robot "
                        f"'{event.target}', which the run does not have"
                    )
            else:
                kind.check(self, event.target)

    def _site_targets(self, plan: FaultPlan) -> dict[str, list[str]]:
        """What random site faults of `plan` may hit: the site's lanes ('from->to'), doors,
        lifts, chargers."""
        found: dict[str, list[str]] = {}
        for kind in {f.kind for f in plan.site_random if f.targets is None}:
            targets = TABLE[kind].targets(self)
            if targets is not None:
                found[kind] = targets
        return found

    def fleet(self, needs: str = "this fault needs a fleet manager") -> FleetManager:
        """The fleet manager the faults act on; a `ConfigError` saying `needs` without one."""
        if self.manager is None:
            raise ConfigError(needs)
        return self.manager

    # -- running ------------------------------------------------------------------------------

    def attach(self) -> FaultInjector:
        """Apply the faults at the start of every step from now on; returns itself."""
        if self._hook is None:
            self._hook = self.sim.on("pre_step", lambda *_: self.step())
        return self

    def detach(self) -> None:
        """Stop applying faults (those going on stay as they are)."""
        if self._hook is not None:
            self.sim.events.off("pre_step", self._hook)
            self._hook = None
        self.sim.events.off("fault_started", self._heard)

    def restart(self, seed: int) -> None:
        """End every fault going on and start the plan over from now, drawn with `seed` (a
        learning task's episodes: the same seed, the same faults at the same times into the
        episode). Times in the records from then on count from now."""
        while self._ends:
            _, key, event = heapq.heappop(self._ends)
            self._end(key, event)
        self.plan = dataclasses.replace(self.plan, seed=int(seed))
        names = [r.name for r in self.robots]
        self.schedule = FaultSchedule(self.plan, names, self._site_targets(self.plan))
        if self.delays is not None:
            config = dataclasses.replace(self.delays.config, seed=int(seed))
            self.delays = DelayGenerator(config, len(names))
        self.origin = self.sim.sim_time

    def step(self) -> None:
        """End the faults whose time is up, then begin those due now."""
        now = self.sim.sim_time - self.origin
        while self._ends and self._ends[0][0] <= now + 1e-9:
            _, key, event = heapq.heappop(self._ends)
            self._end(key, event)
        for event in self.schedule.due(now + 1e-9):
            self._begin(event)
        for block in self.blocks.values():
            block.place()  # (once nothing is in its way)
        if self.delays is not None:
            dt = self.sim.params.timestep
            for i in self.delays.next_tick():
                ticks = int(self.delays.remaining[i])
                self._begin(FaultEvent(now, "delay", self.robots[i].name, ticks * dt, ticks))

    def _begin(self, event: FaultEvent) -> None:
        key = next(self._seq)
        kind = TABLE[event.kind]
        kind.begin(self, key, event)
        row = {**event.row(), "until": event.time + event.duration}
        self.records.append(row)
        if kind.lasts:
            heapq.heappush(self._ends, (event.time + event.duration, key, event))
            self._open[key] = row
        self.sim.events.emit("fault_started", self.sim, dict(row))

    def _end(self, key: int, event: FaultEvent) -> None:
        row = self._open.pop(key)
        TABLE[event.kind].end(self, key, event)
        self.sim.events.emit("fault_ended", self.sim, dict(row))

    # -- what the kinds use -------------------------------------------------------------------

    def going_on(self, kind: str, target: str) -> bool:
        """Whether a fault of `kind` on `target` is going on."""
        return any(r["kind"] == kind and r["target"] == target for r in self._open.values())

    def lane(self, target: str) -> tuple[int, int]:
        """The nodes of a lane named "from->to", checked against the site."""
        if self.sim.site is None:
            raise ConfigError(f"lane_blocked {target}: the simulation has no site")
        a, arrow, b = target.partition("->")
        if not arrow:
            raise ConfigError(f"lane_blocked {target!r}: name the lane as 'from->to' (nodes)")
        graph = self.sim.site.graph
        lane = graph.lane(a.strip(), b.strip())  # (an error naming them when there is none)
        start, end = int(graph.lane_from[lane]), int(graph.lane_to[lane])
        if graph.level[start] != graph.level[end]:
            raise ConfigError(
                f"lane_blocked {target}: a lift's ride between floors, not a lane "
                "on one; use lift_out_of_service"
            )
        return start, end

    def burst(self, event: FaultEvent, key: int) -> list[Task]:
        """An order burst's tasks: from `target` (or random pick-ups) to random drop-offs."""
        graph = self.fleet().graph
        rng = np.random.default_rng([self.plan.seed, 7919, key])
        pickups = [event.target] if event.target else graph.nodes_with("pickup")
        dropoffs = graph.nodes_with("dropoff")
        tasks = []
        for k in range(int(event.value)):
            a = pickups[int(rng.integers(len(pickups)))]
            b = dropoffs[int(rng.integers(len(dropoffs)))]
            tasks.append(Task(f"burst{key}_{k}", (a, b), release_time=event.time))
        return tasks

    def apply_speed(self, i: int) -> None:
        """Robot i drives at the smallest speed factor of its faults going on (1: none)."""
        factors = self.speeds[i].values()
        self.robots[i].set_fault_speed(min(factors) if factors else 1.0)

    # -- results ------------------------------------------------------------------------------

    def kpis(self) -> dict[str, Any]:
        """Faults begun so far, by kind, and those going on now."""
        counts = dict.fromkeys(KINDS, 0)
        for row in self.records:
            counts[row["kind"]] = counts.get(row["kind"], 0) + 1
        return {"faults": counts, "faults_active": len(self._open)}

    def rows(self) -> list[dict[str, Any]]:
        """Every fault begun so far: time, kind, target, duration, amount, until."""
        return [dict(row) for row in self.records]

    def schedule_rows(self) -> list[dict[str, Any]]:
        """The faults that happened, as a fixed schedule (a scenario's `faults.events`) that
        makes the same faults again."""
        return [{k: v for k, v in row.items() if k != "until"} for row in self.records]
