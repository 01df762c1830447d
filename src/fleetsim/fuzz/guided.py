"""Guided search: instead of only new seeds, mutate the faults of the runs that came closest to
failing, and run those. Closeness is the smallest gap the run's robots came to each other (then
the longest robots waited); a mutant is its parent's run (the same seed, the same scenario)
with its faults written out and changed a little: one to three of a fault moved in time,
lengthened, copied to another time or robot, or left out."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.faults.plan import ROBOT_KINDS
from fleetsim.fuzz.keep import kept_scenario, write_kept
from fleetsim.sweep.plan import RunSpec

JITTER_S = 5.0  # a fault moved by about this much (standard deviation)


def closeness(row: dict[str, Any]) -> tuple[float, float]:
    """Sorts the runs that came closest to failing first: the smallest gap between robots,
    then the most waiting."""
    gap = row.get("min_gap_m")
    waited = row.get("waiting_s") or 0.0
    return (gap if gap is not None else math.inf, -float(waited))


def mutate(
    events: list[dict[str, Any]],
    rng: np.random.Generator,
    duration: float | None,
    robots: list[str],
) -> list[dict[str, Any]]:
    """A few small changes to a run's faults (written-out events)."""
    out = copy.deepcopy(events)
    end = duration if duration is not None else max((e["time"] for e in out), default=60.0)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(4)) if out else 2
        if op == 0:  # move one in time
            e = out[int(rng.integers(len(out)))]
            e["time"] = float(min(max(0.0, e["time"] + rng.normal(0.0, JITTER_S)), end))
        elif op == 1:  # make one last longer
            e = out[int(rng.integers(len(out)))]
            e["duration"] = float(e.get("duration", 0.0) * rng.uniform(1.2, 2.0))
        elif op == 2 and (out or robots):  # one more: a copy at another time, maybe robot
            if out:
                e = copy.deepcopy(out[int(rng.integers(len(out)))])
            else:
                e = {"time": 0.0, "kind": "stop", "target": robots[0], "duration": 10.0}
            e["time"] = float(rng.uniform(0.0, end))
            if e["kind"] in ROBOT_KINDS and robots and rng.random() < 0.5:
                e["target"] = robots[int(rng.integers(len(robots)))]
            out.append(e)
        elif op == 3 and len(out) > 1:  # one fewer
            out.pop(int(rng.integers(len(out))))
    return sorted(out, key=lambda e: e["time"])


def mutants(
    parents: list[tuple[RunSpec, dict[str, Any]]],
    count: int,
    first: int,
    folder: Path,
    rng: np.random.Generator,
) -> list[RunSpec]:
    """`count` runs mutated from `parents` (round robin), numbered from `first`, their
    scenarios written to `folder`."""
    specs = []
    for k in range(count):
        parent, row = parents[k % len(parents)]
        events = json.loads(row.get("schedule") or "[]")
        robots = sorted({e["target"] for e in events if e["kind"] in ROBOT_KINDS})
        data = kept_scenario(
            parent.scenario,
            parent.overrides,
            parent.seed,
            parent.duration,
            mutate(events, rng, parent.duration, robots),
        )
        path = write_kept(
            data,
            folder / f"mutant_{first + k}.yaml",
            f"a mutant of run {row['run_id']} (seed {parent.seed})",
        )
        specs.append(
            RunSpec(
                str(path),
                (),
                None,
                {"run": first + k, "parent": row["run_id"]},
                parent.duration,
                parent.details,
            )
        )
    return specs
