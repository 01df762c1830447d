"""What a fuzz run must not do, and when it first did: the checks of `fleetsim fuzz --check`
(the names of `fleetsim run --fail-on`, and a few more).

- `collisions`: any collision (`robot-collisions`: robot with robot only);
- `stalls`: a fleet manager's task that stopped advancing (its stall time);
- `failed-tasks`: a task that failed;
- `failed-actions`: a robot action that failed;
- `deadlocks`: a deadlock that was never resolved;
- `task-timeout=S`: a task not done S seconds after its release (by the end of the run).

`Watch` notes, while a run goes, the first time of what only the simulation sees (collisions,
failed actions); `first_failure` finds the earliest failed check from it and the run's tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, closest
from fleetsim.scenario.runner import RunSummary

NAMES = (
    "collisions",
    "robot-collisions",
    "stalls",
    "failed-tasks",
    "failed-actions",
    "deadlocks",
    "task-timeout",
)


@dataclass(frozen=True)
class Check:
    """One check: its name and, for `task-timeout`, the seconds."""

    name: str
    limit: float | None = None

    def __str__(self) -> str:
        return self.name if self.limit is None else f"{self.name}={self.limit:g}"


def parse_checks(text: str) -> list[Check]:
    """`collisions,stalls,task-timeout=600` as checks; an unknown name is an error with the
    closest one."""
    checks = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        if name not in NAMES:
            guess = closest(name, NAMES)
            hint = f"did you mean '{guess}'?" if guess else f"checks: {', '.join(NAMES)}"
            raise ConfigError(f"--check {item}: no such check; {hint}")
        if (name == "task-timeout") != bool(value):
            raise ConfigError(
                f"--check {item}: "
                + (
                    "task-timeout needs seconds, as task-timeout=600"
                    if not value
                    else f"{name} takes no value"
                )
            )
        limit = None
        if value:
            try:
                limit = float(value)
            except ValueError:
                raise ConfigError(f"--check {item}: expected seconds, such as 600") from None
            if not (math.isfinite(limit) and limit > 0):
                raise ConfigError(f"--check {item}: expected seconds > 0")
        checks.append(Check(name, limit))
    if not checks:
        raise ConfigError(f"--check: name at least one check ({', '.join(NAMES)})")
    return checks


GAP_EVERY_S = 0.5  # how often the smallest gap between robots is measured
GAP_MAX_ROBOTS = 500  # (all pairs, 250,000 at most: beyond this it is not measured)


class Watch:
    """The first simulated time of a collision, of a robot-robot collision and of a failed
    action in a run (noted after each step, a few reads), and how close the run came to a
    collision: the smallest distance between two robots' centres (`min_gap_m`, measured every
    `GAP_EVERY_S`), what guided search looks for."""

    def __init__(self, sim: MultiRobotSimulationCore, robots: list[Any] | None = None) -> None:
        self.sim = sim
        self.first: dict[str, float] = {}
        self.min_gap_m = math.inf
        self._next_gap = 0.0
        self._collisions = 0
        self._handles = sim.handles_of(robots) if robots and len(robots) <= GAP_MAX_ROBOTS else None
        self._rows, self._layout = np.empty(0, dtype=np.int64), -1
        sim.on("post_step", lambda *_: self._look())
        sim.on("action_failed", lambda *_: self.first.setdefault("failed-actions", sim.sim_time))

    def _look(self) -> None:
        sim, first = self.sim, self.first
        count = sim.collision_count
        if count != self._collisions:  # (a new collision: which kind?)
            self._collisions = count
            first.setdefault("collisions", sim.sim_time)
            if "robot-collisions" not in first and sim.collision_counts.get("robot-robot", 0):
                first["robot-collisions"] = sim.sim_time
        if self._handles is not None and len(self._handles) > 1 and sim.sim_time >= self._next_gap:
            self._next_gap = sim.sim_time + GAP_EVERY_S
            self.min_gap_m = min(self.min_gap_m, self._gap())

    def _gap(self) -> float:
        """The smallest distance between two robots' centres now (in 3-D: robots at one x, y on
        two floors of a building are not touching): |a|^2 + |b|^2 - 2 a.b over all pairs (one
        matrix product), about the robots' centroid (no cancellation)."""
        bodies = self.sim.world.bodies
        assert self._handles is not None
        if self._layout != bodies.layout:  # (rows move only when bodies come or go)
            self._rows, self._layout = bodies.rows(self._handles), bodies.layout
        xy = bodies["pos"][self._rows]  # (x, y, z: robots on two floors are floors apart)
        xy = xy - xy.mean(axis=0)
        sq = (xy * xy).sum(axis=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * (xy @ xy.T)
        d2.flat[:: len(xy) + 1] = np.inf  # (not with itself)
        return math.sqrt(max(float(d2.min()), 0.0))


def first_failure(
    checks: list[Check], summary: RunSummary, watch: Watch, deadlocks: list[Any]
) -> tuple[Check, float] | None:
    """The check that failed first and when (simulated seconds), or None."""
    times = []
    for check in checks:
        at = _first(check, summary, watch, deadlocks)
        if at is not None:
            times.append((at, NAMES.index(check.name), check))
    if not times:
        return None
    at, _, check = min(times)
    return check, at


def _first(check: Check, summary: RunSummary, watch: Watch, deadlocks: list[Any]) -> float | None:
    tables = summary.tables
    if check.name in watch.first:
        return watch.first[check.name]
    if check.name == "stalls":
        return min((float(s["time"]) for s in tables.get("stalls", [])), default=None)
    if check.name == "failed-tasks":
        return min(
            (
                float(t["failed_at"])
                for t in tables.get("tasks", [])
                if t.get("status") == "failed" and t.get("failed_at") is not None
            ),
            default=None,
        )
    if check.name == "deadlocks":
        return min((float(d.time) for d in deadlocks if not d.resolved), default=None)
    if check.name == "task-timeout":
        assert check.limit is not None
        late = []
        for t in tables.get("tasks", []):
            due = float(t["release_time"]) + check.limit
            done = t.get("done_at")
            if (done is not None and done > due) or (done is None and summary.sim_time >= due):
                late.append(due)
        return min(late, default=None)
    return None
