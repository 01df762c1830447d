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

import heapq
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError
from fleetsim.faults.blockage import LaneBlockage
from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.plan import (
    DEMAND_KINDS,
    KINDS,
    ROBOT_KINDS,
    SITE_KINDS,
    FaultEvent,
    FaultPlan,
    FaultSchedule,
    SiteFault,
    mix_sides,
)
from fleetsim.fleet.manager import FleetManager
from fleetsim.fleet.tasks import Task

SPEED = {"stop": 0.0, "breakdown": 0.0, "delay": 0.0}  # slowdown: its own factor


class FaultInjector:
    """Applies `plan` to `robots` of `sim` (and, for battery and charger faults, the fleet
    `manager`'s batteries and chargers); `delays` adds execution delays drawn per step."""

    def __init__(self, sim: MultiRobotSimulationCore, robots: Sequence[Agent], plan: FaultPlan,
                 manager: FleetManager | None = None,
                 delays: DelayConfig | None = None) -> None:  # fmt: skip
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
        self._speed: list[dict[int, float]] = [{} for _ in range(r)]  # robot -> fault -> factor
        self._ends: list[tuple[float, int, FaultEvent]] = []  # (end, key, event)
        self._open: dict[int, dict[str, Any]] = {}  # key -> the row of a fault going on
        self._seq = itertools.count()
        self._blocks: dict[int, LaneBlockage] = {}  # key -> a lane's box, while it is blocked
        self._hook: Any = None
        # faults other parts inject (an interface's lost messages) are rows here too
        self._heard = sim.on("fault_started", lambda _s, row: self._external(row))

    def _external(self, row: dict[str, Any]) -> None:
        if row.get("by"):
            self.records.append({k: v for k, v in row.items() if k != "by"})

    def _check_targets(self, plan: FaultPlan) -> None:
        for fault in plan.site:
            self._check_site(fault)
        for random in plan.site_random:
            for target in random.targets or ():
                self._check_site(SiteFault(random.kind, target, 0.0, 0.0))
        for demand in plan.demand:
            self._check_demand(demand.kind, demand.target)
        batteries = any(p.kind == "battery" for p in plan.robots) or any(
            e.kind == "battery" for e in plan.events)  # fmt: skip
        if batteries and (self.manager is None or not self.manager.charging.on):
            raise ConfigError("battery faults need a fleet manager with batteries")
        for event in plan.events:
            if event.kind not in KINDS:
                raise ConfigError(f"fault event kind {event.kind!r}: expected one of "
                                  f"{', '.join(KINDS)}")  # fmt: skip
            if event.kind in (*ROBOT_KINDS, "delay") and event.target not in self.index:
                raise ConfigError(f"a {event.kind} fault at {event.time:g} s names robot "
                                  f"'{event.target}', which the run does not have")  # fmt: skip
            if event.kind in DEMAND_KINDS:
                self._check_demand(event.kind, event.target)
            if event.kind in SITE_KINDS:
                self._check_site(SiteFault(event.kind, event.target, event.time,
                                           event.duration, event.open))  # fmt: skip

    def _site_targets(self, plan: FaultPlan) -> dict[str, list[str]]:
        """What random site faults of `plan` may hit: the site's lanes ('from->to'), doors,
        lifts, chargers."""
        found: dict[str, list[str]] = {}
        sim = self.sim
        for kind in {f.kind for f in plan.site_random if f.targets is None}:
            if kind == "lane_blocked" and sim.site is not None:
                g = sim.site.graph
                ends = zip(g.lane_from.tolist(), g.lane_to.tolist(), strict=True)
                found[kind] = [f"{g.names[a]}->{g.names[b]}" for a, b in ends
                               if g.level[a] == g.level[b]]  # (lanes on one floor)  # fmt: skip
            elif kind == "door_stuck" and sim.doors is not None:
                found[kind] = sorted(sim.doors.doors)
            elif kind == "lift_out_of_service" and sim.lifts is not None:
                found[kind] = sorted(sim.lifts.lifts)
            elif kind == "charger_down" and self.manager is not None:
                found[kind] = [self.manager.graph.names[n] for n in self.manager.charging.chargers]
        return found

    def _check_demand(self, kind: str, target: str) -> None:
        if self.manager is None:
            raise ConfigError(f"{kind} faults need a fleet manager (its orders and stations)")
        graph = self.manager.graph
        if kind == "order_mix":
            for node in (n for side in mix_sides(target) for n in side):
                graph.node(node)  # (an unknown node is an error with the closest name)
        elif target:
            graph.node(target)  # (an unknown node is an error with the closest name)
        elif kind == "order_burst" and not (graph.nodes_with("pickup")
                                            and graph.nodes_with("dropoff")):  # fmt: skip
            raise ConfigError("order_burst: the site has no pickup and dropoff nodes")

    def _check_site(self, fault: SiteFault) -> None:
        sim = self.sim
        if fault.kind == "lane_blocked":
            self._lane(fault.target)
            return
        if fault.kind == "charger_down":
            if self.manager is None or not self.manager.charging.on:
                raise ConfigError(f"charger_down {fault.target}: needs a fleet manager with "
                                  "batteries")  # fmt: skip
            self.manager.graph.node(fault.target)  # (an unknown node is an error)
            return
        what, names = (
            ("door", sim.doors.doors if sim.doors is not None else {})
            if (fault.kind == "door_stuck")
            else ("lift", sim.lifts.lifts if sim.lifts else {})
        )
        if fault.target not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ConfigError(f"{fault.kind}: the site has no {what} '{fault.target}' "
                              f"({what}s: {known})")  # fmt: skip

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

    def step(self) -> None:
        """End the faults whose time is up, then begin those due now."""
        now = self.sim.sim_time
        while self._ends and self._ends[0][0] <= now + 1e-9:
            _, key, event = heapq.heappop(self._ends)
            self._end(key, event)
        for event in self.schedule.due(now + 1e-9):
            self._begin(event)
        for block in self._blocks.values():
            block.place()  # (once nothing is in its way)
        if self.delays is not None:
            dt = self.sim.params.timestep
            for i in self.delays.next_tick():
                ticks = int(self.delays.remaining[i])
                self._begin(FaultEvent(now, "delay", self.robots[i].name, ticks * dt, ticks))

    def _begin(self, event: FaultEvent) -> None:
        key = next(self._seq)
        i = self.index.get(event.target, -1)
        kind = event.kind
        if kind in SPEED or kind == "slowdown":
            self._speed[i][key] = SPEED.get(kind, event.value)
            self._apply_speed(i)
            self.broken[i] |= kind == "breakdown"
        elif kind == "jump":
            self.reported_offset[i] = (event.value * math.cos(event.angle),
                                       event.value * math.sin(event.angle))  # fmt: skip
        elif kind == "battery":
            assert self.manager is not None and self.manager.charging.batteries is not None
            b = self.manager.charging.batteries
            b.soc[i] = max(0.0, b.soc[i] - event.value)
        elif kind == "door_stuck":
            self.sim.doors.stick(event.target, event.open)  # type: ignore[union-attr]
        elif kind == "lift_out_of_service":
            self.sim.lifts.set_in_service(event.target, False)  # type: ignore[union-attr]
        elif kind == "charger_down":
            assert self.manager is not None
            self.manager.charging.set_down(self.manager.graph.node(event.target), True)
        elif kind == "lane_blocked":
            start, end = self._lane(event.target)
            assert self.sim.site is not None
            block = LaneBlockage(self.sim, self.sim.site.graph, start, end, self.robots,
                                 f"blocked {event.target}")  # fmt: skip
            self._blocks[key] = block
            block.place()
            if self.manager is not None:
                self.manager.close_lane(start, end)
        elif kind == "order_burst":
            assert self.manager is not None
            self.manager.book.add(self._burst(event, key), event.time)
        elif kind == "station_closed":
            assert self.manager is not None
            self.manager.book.closed.add(event.target)
        elif kind == "order_mix":
            assert self.manager is not None
            pickups, dropoffs = mix_sides(event.target)
            rng = np.random.default_rng([self.plan.seed, 7927, key])
            self.manager.book.mixes[key] = (pickups, dropoffs, rng)
        row = {**event.row(), "until": event.time + event.duration}
        self.records.append(row)
        if kind not in ("battery", "order_burst"):  # (over at once)
            heapq.heappush(self._ends, (event.time + event.duration, key, event))
            self._open[key] = row
        self.sim.events.emit("fault_started", self.sim, dict(row))

    def _end(self, key: int, event: FaultEvent) -> None:
        row = self._open.pop(key)
        i = self.index.get(event.target, -1)
        kind = event.kind
        if kind in SPEED or kind == "slowdown":
            self._speed[i].pop(key, None)
            self._apply_speed(i)
            if kind == "breakdown":
                self.broken[i] = any(
                    r["kind"] == "breakdown" and r["target"] == event.target
                    for r in self._open.values()
                )
        elif kind == "jump":
            self.reported_offset[i] = 0.0
        elif kind == "door_stuck":
            self.sim.doors.stick(event.target, None)  # type: ignore[union-attr]
        elif kind == "lift_out_of_service":
            self.sim.lifts.set_in_service(event.target, True)  # type: ignore[union-attr]
        elif kind == "charger_down":
            assert self.manager is not None
            self.manager.charging.set_down(self.manager.graph.node(event.target), False)
        elif kind == "station_closed":
            assert self.manager is not None
            self.manager.book.closed.discard(event.target)
        elif kind == "order_mix":
            assert self.manager is not None
            self.manager.book.mixes.pop(key, None)
        elif kind == "lane_blocked":
            self._blocks.pop(key).remove()
            if self.manager is not None:
                self.manager.open_lane(*self._lane(event.target))
        self.sim.events.emit("fault_ended", self.sim, dict(row))

    def _lane(self, target: str) -> tuple[int, int]:
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
            raise ConfigError(f"lane_blocked {target}: a lift's ride between floors, not a lane "
                              "on one; use lift_out_of_service")  # fmt: skip
        return start, end

    def _burst(self, event: FaultEvent, key: int) -> list[Task]:
        """An order burst's tasks: from `target` (or random pick-ups) to random drop-offs."""
        assert self.manager is not None
        graph = self.manager.graph
        rng = np.random.default_rng([self.plan.seed, 7919, key])
        pickups = [event.target] if event.target else graph.nodes_with("pickup")
        dropoffs = graph.nodes_with("dropoff")
        tasks = []
        for k in range(int(event.value)):
            a = pickups[int(rng.integers(len(pickups)))]
            b = dropoffs[int(rng.integers(len(dropoffs)))]
            tasks.append(Task(f"burst{key}_{k}", (a, b), release_time=event.time))
        return tasks

    def _apply_speed(self, i: int) -> None:
        factors = self._speed[i].values()
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
