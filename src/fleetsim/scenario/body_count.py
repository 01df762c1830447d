"""How many bodies a scenario would make, counted from its file and checked before anything is
built (a grid count of 10^7 is a typo until the user says otherwise)."""

from __future__ import annotations

from typing import Any

from fleetsim.scenario import schema as s
from fleetsim.scenario.loader import LoadedScenario, ScenarioError

DEFAULT_MAX_BODIES = 200_000


def body_counts(loaded: LoadedScenario) -> list[tuple[str, int]]:
    """(key path, bodies) of every entry that makes bodies."""
    spec = loaded.scenario
    counts = [(f"environment.files[{i}]", 1) for i in range(len(spec.environment.files))]
    counts += [_count(f"robots[{i}]", r.grid, r.start) for i, r in enumerate(spec.robots)]
    counts += [_count(f"objects[{i}]", o.grid, None) for i, o in enumerate(spec.objects)]
    return counts


def _count(where: str, grid: s.GridSpec | None, start: Any) -> tuple[str, int]:
    if isinstance(start, s.RandomStartSpec):
        return f"{where}.start.random", start.random
    if isinstance(start, list):
        return f"{where}.start", len(start)
    return (f"{where}.grid.count", grid.count) if grid is not None else (where, 1)


def check_body_count(loaded: LoadedScenario, max_bodies: int) -> None:
    """Refuse a scenario with more bodies than `max_bodies`, or than memory holds, before building
    it."""
    counts = body_counts(loaded)
    total = sum(n for _, n in counts)
    if total > max_bodies:
        where, largest = max(counts, key=lambda c: c[1])
        raise ScenarioError(
            f"{loaded.at(where)}: {total:,} bodies in all ({largest:,} here) is more than the "
            f"limit of {max_bodies:,}; if you mean it, raise the limit (fleetsim run/validate "
            "--max-bodies N, or build(..., max_bodies=N))"
        )
