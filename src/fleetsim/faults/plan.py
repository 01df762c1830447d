"""What goes wrong, and when: fault processes (seeded) and fixed faults, and the concrete fault
events they make, in time order.

A robot fault process (`RobotFaults`) happens to each of its robots as a Poisson process of
`rate_per_hour` (or at fixed `at` times); each event lasts a duration drawn uniformly from its
span. Each (process, robot) pair draws from its own generator, seeded from the plan's seed and
the robot's name, so the faults of one robot do not depend on how many others there are, on
its place among them, or on anything that happens in the run: the same plan and seed give the
same events, bit for bit. A site
fault (`SiteFault`: a door stuck, a lift out of service, a charger down, a lane blocked)
happens at its time for its duration; a `SiteFaults` process at random times on random
targets. `FaultSchedule` hands out the events as simulated time reaches them.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError

ROBOT_KINDS = ("stop", "slowdown", "breakdown", "jump", "battery", "disconnect")
SITE_KINDS = ("door_stuck", "lift_out_of_service", "charger_down", "lane_blocked")
DEMAND_KINDS = ("order_burst", "station_closed", "order_mix")
KINDS = (*ROBOT_KINDS, "delay", *SITE_KINDS, *DEMAND_KINDS)


def _check_process(
    kind: str, kinds: Sequence[str], rate_per_hour: float, duration: tuple[float, float]
) -> None:
    """A fault process's kind, rate and span of durations, checked."""
    if kind not in kinds:
        raise ConfigError(f"fault kind {kind!r}: expected one of {', '.join(kinds)}")
    lo, hi = duration
    if not (math.isfinite(rate_per_hour) and rate_per_hour >= 0):
        raise ConfigError(f"{kind}: rate_per_hour must be >= 0, got {rate_per_hour}")
    if not (0 <= lo <= hi and math.isfinite(hi)):
        raise ConfigError(f"{kind}: duration must be [min, max] seconds, got {lo}, {hi}")


@dataclass(frozen=True)
class RobotFaults:
    """A kind of robot fault: `stop` (for a while), `slowdown` (to `factor` of its speed),
    `breakdown` (stopped until repaired), `jump` (the reported pose is `distance` metres off,
    the body is not), `battery` (a drain spike of `drain`, a fraction of a full charge),
    `disconnect` (its network session is cut: a VDA 5050 vehicle's broker sends its last will,
    and it comes back when the fault ends; the robot drives on). At
    `rate_per_hour` per robot, and/or at fixed `at` (robot name, time) pairs; `robots` limits
    it to those names (None: every robot)."""

    kind: str
    rate_per_hour: float = 0.0
    at: tuple[tuple[str, float], ...] = ()
    duration: tuple[float, float] = (30.0, 30.0)  # seconds, uniform between
    factor: float = 0.5
    distance: float = 1.0
    drain: float = 0.1
    robots: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _check_process(self.kind, ROBOT_KINDS, self.rate_per_hour, self.duration)
        if not 0 <= self.factor <= 1:
            raise ConfigError(f"{self.kind}: factor must be in [0, 1], got {self.factor}")
        if not 0 <= self.drain <= 1:
            raise ConfigError(f"{self.kind}: drain is a fraction of a charge, got {self.drain}")
        if not (math.isfinite(self.distance) and self.distance >= 0):
            raise ConfigError(f"{self.kind}: distance must be >= 0 m, got {self.distance}")


@dataclass(frozen=True)
class SiteFault:
    """A fault of the site at `time` for `duration` seconds: `door_stuck` (door `target`
    stuck open if `open`, else closed), `lift_out_of_service` (lift `target`), `charger_down`
    (the charger at node `target`), `lane_blocked` (the lane `target`, "from->to": closed to
    a fleet manager's routes, and a box on it)."""

    kind: str
    target: str
    time: float
    duration: float
    open: bool = False

    def __post_init__(self) -> None:
        if self.kind not in SITE_KINDS:
            raise ConfigError(f"fault kind {self.kind!r}: expected one of {', '.join(SITE_KINDS)}")
        if not (self.time >= 0 and self.duration >= 0 and math.isfinite(self.duration)):
            raise ConfigError(f"{self.kind} {self.target}: time and duration must be >= 0")


@dataclass(frozen=True)
class SiteFaults:
    """A kind of site fault at random: `rate_per_hour` faults an hour on the site as a whole
    (a Poisson process), each on a target drawn uniformly from `targets` (None: every one of
    its kind the site has: lanes, doors, lifts or chargers), lasting a duration drawn
    uniformly from its span."""

    kind: str
    rate_per_hour: float
    duration: tuple[float, float] = (60.0, 60.0)
    targets: tuple[str, ...] | None = None
    open: bool = False

    def __post_init__(self) -> None:
        _check_process(self.kind, SITE_KINDS, self.rate_per_hour, self.duration)
        if self.targets is not None and not self.targets:
            raise ConfigError(f"{self.kind}: targets is empty (leave it out for every one)")


@dataclass(frozen=True)
class DemandFault:
    """A change of demand at `time`: `order_burst` (`count` orders at once, picked up at
    `target`, or at random pick-up stations when it is empty, for random drop-offs),
    `station_closed` (no order through the station at node `target` is handed out for
    `duration` seconds; those assigned already go on) or `order_mix` (for `duration` seconds
    the orders released are picked up and dropped off elsewhere: `target` is
    'pickups->dropoffs', each side a comma-separated list of nodes drawn from at random, or
    empty to leave that end as it was: '->dock_1' sends every order to dock_1)."""

    kind: str
    time: float
    target: str = ""
    duration: float = 0.0
    count: int = 10

    def __post_init__(self) -> None:
        if self.kind not in DEMAND_KINDS:
            raise ConfigError(
                f"fault kind {self.kind!r}: expected one of {', '.join(DEMAND_KINDS)}"
            )
        if not (self.time >= 0 and self.duration >= 0 and self.count >= 0):
            raise ConfigError(f"{self.kind}: time, duration and count must be >= 0")
        if self.kind == "station_closed" and not self.target:
            raise ConfigError("station_closed: name the station's node (target)")
        if self.kind == "order_mix":
            mix_sides(self.target)


def mix_sides(target: str) -> tuple[list[str], list[str]]:
    """The pick-ups and drop-offs of an `order_mix` target 'a,b->c' (either side may be
    empty, not both)."""
    pickups, arrow, dropoffs = target.partition("->")
    sides = (
        [p.strip() for p in pickups.split(",") if p.strip()],
        [d.strip() for d in dropoffs.split(",") if d.strip()],
    )
    if not arrow or not (sides[0] or sides[1]):
        raise ConfigError(
            f"order_mix {target!r}: give 'pickups->dropoffs' (nodes, comma "
            "separated; one side may be empty: '->dock_1')"
        )
    return sides


@dataclass(frozen=True, order=True)
class FaultEvent:
    """One fault that happens: when, what, to whom (a robot's or a device's name), for how
    long, and its amount (the factor, distance or drain; for a jump, its direction too)."""

    time: float
    kind: str
    target: str
    duration: float = 0.0
    value: float = 0.0
    angle: float = 0.0
    open: bool = False

    def row(self) -> dict[str, Any]:
        """The event as a row (and as a scenario's `faults.events` entry)."""
        row: dict[str, Any] = {
            "time": self.time,
            "kind": self.kind,
            "target": self.target,
            "duration": self.duration,
        }
        if self.kind in ("slowdown", "jump", "battery", "delay", "order_burst"):
            row["value"] = self.value
        if self.kind == "jump":
            row["angle"] = self.angle
        if self.kind == "door_stuck":
            row["open"] = self.open
        return row


@dataclass(frozen=True)
class FaultPlan:
    """Everything that is to go wrong in a run: robot fault processes, site faults, fixed
    events (a schedule written out), and the seed."""

    robots: tuple[RobotFaults, ...] = ()
    site: tuple[SiteFault, ...] = ()
    events: tuple[FaultEvent, ...] = ()
    seed: int = 0
    demand: tuple[DemandFault, ...] = ()
    site_random: tuple[SiteFaults, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether nothing is to go wrong."""
        return not (self.robots or self.site or self.events or self.demand or self.site_random)


@dataclass
class _Stream:
    """One robot's events of one process (or the site's, `choices` its targets): the next
    one, drawn when the last has begun."""

    process: RobotFaults | SiteFaults
    robot: str
    rng: np.random.Generator
    fixed: list[float] = field(default_factory=list)
    next_random: float = math.inf
    choices: Sequence[str] = ()

    def draw_next(self, after: float) -> None:
        rate = self.process.rate_per_hour
        if rate > 0:
            self.next_random = after + float(self.rng.exponential(3600.0 / rate))

    def event(self, time: float) -> FaultEvent:
        p = self.process
        lo, hi = p.duration
        if isinstance(p, SiteFaults):
            target = self.choices[int(self.rng.integers(len(self.choices)))]
            duration = float(self.rng.uniform(lo, hi)) if hi > lo else lo
            return FaultEvent(time, p.kind, target, duration, open=p.open)
        duration = float(self.rng.uniform(lo, hi)) if hi > lo else lo
        value = {"slowdown": p.factor, "jump": p.distance, "battery": p.drain}.get(p.kind, 0.0)
        angle = float(self.rng.uniform(-math.pi, math.pi)) if p.kind == "jump" else 0.0
        return FaultEvent(time, p.kind, self.robot, duration, value, angle)


class FaultSchedule:
    """The events of a `FaultPlan` for robots named `names`, in time order (`due`);
    `site_targets` names, per site fault kind, what a random site fault may hit (the site's
    lanes, doors, lifts or chargers)."""

    def __init__(
        self,
        plan: FaultPlan,
        names: Sequence[str],
        site_targets: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        known = set(names)
        self._fixed: list[FaultEvent] = sorted(plan.events)
        self._fixed += sorted(
            FaultEvent(s.time, s.kind, s.target, s.duration, open=s.open) for s in plan.site
        )
        self._fixed += [
            FaultEvent(d.time, d.kind, d.target, d.duration, float(d.count)) for d in plan.demand
        ]
        self._fixed.sort()
        self._streams: list[_Stream] = []
        for k, process in enumerate(plan.robots):
            targets = list(names) if process.robots is None else list(process.robots)
            unknown = [r for r in targets if r not in known] + [
                r for r, _ in process.at if r not in known
            ]
            if unknown:
                raise ConfigError(
                    f"{process.kind} faults name robots the run does not have: "
                    f"{', '.join(sorted(set(unknown)))}"
                )
            for robot in targets:
                # by the robot's name, not its place: adding a robot changes no one else's faults
                rng = np.random.default_rng([plan.seed, k, zlib.crc32(robot.encode())])
                stream = _Stream(process, robot, rng)
                stream.fixed = sorted(t for r, t in process.at if r == robot)
                stream.draw_next(0.0)
                self._streams.append(stream)
        for k, site in enumerate(plan.site_random):
            choices = site.targets or tuple((site_targets or {}).get(site.kind, ()))
            if not choices and site.rate_per_hour > 0:
                raise ConfigError(f"{site.kind} at random: the site has none to hit")
            stream = _Stream(
                site, "", np.random.default_rng([plan.seed, 104729, k]), choices=choices
            )
            stream.draw_next(0.0)
            self._streams.append(stream)
        self._heap: list[tuple[float, int]] = [
            (self._next_of(s), k) for k, s in enumerate(self._streams)
        ]
        heapq.heapify(self._heap)
        self._fixed_at = 0

    @staticmethod
    def _next_of(stream: _Stream) -> float:
        return min(stream.fixed[0] if stream.fixed else math.inf, stream.next_random)

    def due(self, now: float) -> Iterator[FaultEvent]:
        """The events that begin at or before `now`, not handed out before, in time order."""
        found: list[FaultEvent] = []
        while self._fixed_at < len(self._fixed) and self._fixed[self._fixed_at].time <= now:
            found.append(self._fixed[self._fixed_at])
            self._fixed_at += 1
        while self._heap and self._heap[0][0] <= now:
            time, k = heapq.heappop(self._heap)
            stream = self._streams[k]
            if stream.fixed and stream.fixed[0] == time:
                stream.fixed.pop(0)
            else:
                stream.draw_next(time)  # (the next one after this one)
            found.append(stream.event(time))
            heapq.heappush(self._heap, (self._next_of(stream), k))
        found.sort()
        yield from found
