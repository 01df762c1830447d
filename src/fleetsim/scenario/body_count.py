"""How many bodies (and people) a scenario would make, counted from its file and checked before
anything is built (a grid count of 10^7 is a typo until the user says otherwise)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.memory import check_bytes, check_fits
from fleetsim.models import model_sensors
from fleetsim.scenario import schema as s
from fleetsim.scenario.loader import LoadedScenario, ScenarioError
from fleetsim.sensors import LidarParams
from fleetsim.sensors.lidars import BYTES_PER_BEAM

DEFAULT_MAX_BODIES = 200_000
BYTES_PER_PERSON = 2_000  # a person's crowd row, route and tree, generously


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


def people_counts(loaded: LoadedScenario) -> list[tuple[str, int]]:
    """(key path, people) of each `people:` group: those who come at once, and those expected
    to arrive at its rate until its `stop` or the scenario's duration (none counted for a run
    without an end)."""
    spec = loaded.scenario
    if spec.people is None:
        return []
    counts = []
    duration = spec.simulation.duration  # type: ignore[attr-defined]
    for k, group in enumerate(spec.people.groups):
        counts.append((f"people.groups[{k}].count", group.count))
        end = group.stop if group.stop is not None else duration
        if group.rate_per_hour > 0 and end is not None and end > group.start:
            expected = math.ceil(group.rate_per_hour * (end - group.start) / 3600)
            counts.append((f"people.groups[{k}].rate_per_hour", expected))
    return counts


def lidar_beams(loaded: LoadedScenario) -> list[tuple[str, int]]:
    """(key path, beams) of each robot entry whose robots carry lidars: its robots times the
    beams of each (those of its `sensors` and those its model carries)."""
    beams = []
    for i, robot in enumerate(loaded.scenario.robots):
        carried, _ = model_sensors(robot.model)
        each = [LidarParams(**dict(one)).beams for one in carried]
        each += [LidarParams(**spec.fields()).beams for spec in robot.sensors]
        if each:
            _, count = _count(f"robots[{i}]", robot.grid, robot.start)
            beams.append((f"robots[{i}].sensors", count * sum(each)))
    return beams


def check_body_count(loaded: LoadedScenario, max_bodies: int) -> None:
    """Refuse a scenario, before building it, with more bodies or people than `max_bodies`, or
    whose lidars' beams or people would not fit in this machine's memory (its bodies' memory:
    `AgentManager` checks it as it spawns them)."""
    counts = body_counts(loaded)
    total = sum(n for _, n in counts)
    if total > max_bodies:
        where, largest = max(counts, key=lambda c: c[1])
        raise ScenarioError(
            f"{loaded.at(where)}: {total:,} bodies in all ({largest:,} here) is more than the "
            f"limit of {max_bodies:,}; if you mean it, raise the limit (fleetsim run/validate "
            "--max-bodies N, or build(..., max_bodies=N))"
        )
    scanned = lidar_beams(loaded)
    if scanned:
        beams = sum(n for _, n in scanned)
        with _at(loaded, max(scanned, key=lambda c: c[1])[0]):
            check_bytes(BYTES_PER_BEAM * beams, f"the robots' lidars ({beams:,} beams in all)",
                        "give them fewer beams, or fewer robots a lidar")  # fmt: skip
    people = people_counts(loaded)
    if not people:
        return
    crowd = sum(n for _, n in people)
    where, largest = max(people, key=lambda c: c[1])
    arriving = " arriving over the run" if where.endswith("rate_per_hour") else ""
    if crowd > max_bodies:
        raise ScenarioError(
            f"{loaded.at(where)}: {crowd:,} people in all ({largest:,}{arriving} here) is more "
            f"than the limit of {max_bodies:,} (which holds for people as for bodies); if you "
            "mean it, raise the limit (fleetsim run/validate --max-bodies N, or build(..., "
            "max_bodies=N))"
        )
    with _at(loaded, where):
        check_fits(crowd, "people", BYTES_PER_PERSON)


@contextlib.contextmanager
def _at(loaded: LoadedScenario, where: str) -> Iterator[None]:
    """A memory refusal in the block, said as the scenario's key `where` (file and line)."""
    try:
        yield
    except ConfigError as exc:
        raise ScenarioError(f"{loaded.at(where)}: {exc}") from None
