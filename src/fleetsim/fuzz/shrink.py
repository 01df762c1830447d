"""Shrinking a failing run: a shorter run, fewer faults and fewer robots that still fail the
same check, each step confirmed by running it (delta debugging, within a budget of runs).

The run is first cut to just after its first failure. Then its robots are shrunk: an entry of
many robots (`start: {random: N}`, `count`) is halved while it still fails, and entries are
dropped with `ddmin` (Zeller's delta debugging: try halves, then complements, then finer
pieces, keeping any smaller set that still fails); the faults of robots that are gone go with
them. Then the faults are shrunk with `ddmin`. Last, the run is cut again to its (new) first
failure.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from fleetsim.faults.plan import ROBOT_KINDS
from fleetsim.fuzz.checks import Check
from fleetsim.fuzz.keep import write_kept
from fleetsim.fuzz.outside import OutsideManager
from fleetsim.fuzz.run import fuzz_one
from fleetsim.scenario import build, load_scenario
from fleetsim.sweep.plan import RunSpec

T = TypeVar("T")
CUT_MARGIN_S = 1.0  # a cut run goes on this long after the first failure


@dataclass
class Shrunk:
    """A shrunk run: its scenario data, the row of its last confirming run, and the runs it
    took."""

    data: dict[str, Any]
    row: dict[str, Any]
    runs: int = 0
    steps: list[str] = field(default_factory=list)  # what was tried and kept, in order


class Shrinker:
    """Shrinks the kept run `data` that fails `check`, within `budget` runs."""

    def __init__(
        self,
        data: dict[str, Any],
        check: Check,
        budget: int = 60,
        folder: Path | None = None,
        manager: OutsideManager | None = None,
    ) -> None:
        self.check, self.budget, self.manager = check, budget, manager
        self.runs = 0
        self._folder = folder or Path(tempfile.mkdtemp(prefix="fleetsim-shrink-"))
        self.best = copy.deepcopy(data)
        self.best_row: dict[str, Any] = {}
        self.steps: list[str] = []

    def fails(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """Run `data`; its row if it fails the same check, else None (also past the budget)."""
        if self.runs >= self.budget:
            return None
        self.runs += 1
        path = write_kept(data, self._folder / f"candidate_{self.runs}.yaml")
        files = str(self._folder / f"candidate_{self.runs}") if self.manager else None
        row = fuzz_one(
            RunSpec(str(path), (), None, {}, None, files), [self.check], manager=self.manager
        )
        return row if row.get("check") == str(self.check) else None

    def shrink(self) -> Shrunk:
        """Cut, shrink the faults, the robots, cut again; the smallest run that still fails."""
        row = self.fails(self.best)
        if row is None:
            return Shrunk(self.best, {}, self.runs, ["not reproduced: nothing shrunk"])
        self.best_row = row
        self._cut()
        self._robots()  # (first: a robot that goes takes its faults with it)
        self._faults()
        self._cut()
        return Shrunk(self.best, self.best_row, self.runs, self.steps)

    def _try(self, data: dict[str, Any], what: str) -> bool:
        row = self.fails(data)
        if row is None:
            return False
        self.best, self.best_row = data, row
        self.steps.append(what)
        return True

    def _cut(self) -> None:
        first = self.best_row.get("first_failure_s")
        duration = self.best.get("simulation", {}).get("duration")
        if first is None or (duration is not None and first + CUT_MARGIN_S >= duration):
            return
        data = copy.deepcopy(self.best)
        data.setdefault("simulation", {})["duration"] = round(first + CUT_MARGIN_S, 6)
        events = data.get("faults", {}).get("events", [])
        data["faults"]["events"] = [e for e in events if e["time"] <= first + CUT_MARGIN_S]
        self._try(data, f"cut to {first + CUT_MARGIN_S:g} s")

    def _faults(self) -> None:
        events = list(self.best.get("faults", {}).get("events", []))
        if not events:
            return

        def still(subset: list[dict[str, Any]]) -> bool:
            data = copy.deepcopy(self.best)
            data["faults"]["events"] = subset
            return self._try(data, f"{len(subset)} of {len(events)} faults")

        if still([]):  # it fails without any fault: none is needed
            return
        ddmin(events, still)

    def _robots(self) -> None:
        robots = self.best.get("robots") or []
        for k in range(len(robots)):
            while True:
                data = copy.deepcopy(self.best)
                entry = data["robots"][k]
                start = entry.get("start")
                if (
                    isinstance(start, dict)
                    and isinstance(start.get("random"), int)
                    and (start["random"] > 1)
                ):
                    start["random"] = start["random"] // 2
                    what = f"robots[{k}]: {start['random']} robots"
                elif isinstance(entry.get("count"), int) and entry["count"] > 1:
                    entry["count"] = entry["count"] // 2
                    what = f"robots[{k}]: {entry['count']} robots"
                else:
                    break
                if not self._try(keep_known_robots(data), what):
                    break
        if len(self.best.get("robots") or []) > 1:
            original = copy.deepcopy(self.best["robots"])
            entries = list(range(len(original)))

            def still(subset: list[int]) -> bool:
                data = copy.deepcopy(self.best)
                data["robots"] = [copy.deepcopy(original[k]) for k in sorted(subset)]
                return bool(subset) and self._try(
                    keep_known_robots(data), f"{len(subset)} robot entries"
                )

            ddmin(entries, still)


def keep_known_robots(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the fault events of robots it no longer has (found by building it)."""
    folder = Path(tempfile.mkdtemp(prefix="fleetsim-shrink-"))
    path = write_kept({k: v for k, v in data.items() if k != "faults"}, folder / "robots.yaml")
    try:
        built = build(load_scenario(path), target_rtf=0.0, gui=None)
        with built.sim:
            names = {r.name for r in built.scene.robots}
    finally:
        path.unlink()
        folder.rmdir()
    robot_kinds = (*ROBOT_KINDS, "delay")
    events = data.get("faults", {}).get("events", [])
    keep = [e for e in events if e["kind"] not in robot_kinds or e["target"] in names]
    data["faults"]["events"] = keep
    return data


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """The smallest subset of `items` (1-minimal, as far as the tests go) for which `fails`
    holds, `fails(list(items))` being assumed; `fails` keeps what it accepts."""
    current, n = list(items), 2
    while len(current) >= 2:
        size = max(1, len(current) // n)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        for chunk in chunks:
            if fails(chunk):
                current, n = chunk, 2
                break
        else:
            for k in range(len(chunks)):
                rest = [x for j, c in enumerate(chunks) if j != k for x in c]
                if fails(rest):
                    current, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(current):
                    break
                n = min(len(current), 2 * n)
    return current
