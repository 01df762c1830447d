"""Tasks and where they come from: a fixed list, a Poisson stream of orders per station, or a
CSV/JSON file of timed orders. A task visits its places in order (a delivery: pick up at the
first, drop off at the last) and records its life cycle with simulation timestamps."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site import NavGraph

MAX_ORDERS_PER_HOUR = 1_000_000  # a Poisson stream's total rate: more is a typo


class TaskStatus(Enum):
    """A task's life: waiting, released, assigned, started, done or failed."""

    WAITING = "waiting"  # not released yet
    RELEASED = "released"
    ASSIGNED = "assigned"
    STARTED = "started"  # the robot reached its first place
    DONE = "done"
    FAILED = "failed"


@dataclass
class Task:
    """Visit `places` (node names) in order. `kind` "delivery" picks up at the first place and
    drops off at the last; "visit" only stops at each."""

    id: str
    places: tuple[str, ...]
    kind: str = "delivery"
    release_time: float = 0.0
    priority: int = 0
    deadline: float | None = None
    status: TaskStatus = TaskStatus.WAITING
    robot: str | None = None
    reason: str | None = None  # why it failed
    times: dict[str, float] = field(default_factory=dict)  # status value -> simulation time
    source: str = field(default="", repr=False, compare=False)  # where it was read, for errors

    def mark(self, status: TaskStatus, now: float) -> None:
        """Move the task to `status` at simulated time `now` (kept in `times`)."""
        self.status = status
        self.times[status.value] = now

    @property
    def cycle_time(self) -> float | None:
        """Released to done, in seconds (None until done)."""
        done, released = self.times.get("done"), self.times.get("released")
        return None if done is None or released is None else done - released


KINDS = ("delivery", "visit")
TASK_KEYS = {"id", "places", "pickup", "dropoff", "kind", "release_time", "priority", "deadline"}


def check_tasks(tasks: Sequence[Task], graph: NavGraph, where: str = "tasks") -> None:
    """Every task names known places, a known kind and sane times (before anything runs)."""
    seen: set[str] = set()
    for k, task in enumerate(tasks):
        item = f"{task.source or f'{where}[{k}]'} ({task.id})"
        if task.id in seen:
            raise ConfigError(f"{item}: duplicate task id")
        seen.add(task.id)
        if task.kind not in KINDS:
            raise ConfigError(f"{item}: unknown kind '{task.kind}' (use {' or '.join(KINDS)})")
        if len(task.places) < (2 if task.kind == "delivery" else 1):
            raise ConfigError(f"{item}: a {task.kind} needs places (pick-up and drop-off)")
        for place in task.places:
            try:
                graph.node(place)
            except ConfigError as exc:
                raise ConfigError(f"{item}: {exc}") from None
        _check_time(item, "release_time", task.release_time)
        if task.deadline is not None:
            _check_time(item, "deadline", task.deadline)
        if task.deadline is not None and not task.deadline >= task.release_time:
            raise ConfigError(f"{item}: the deadline is before the release time")


def task_list(
    items: Sequence[dict[str, Any]], label: Callable[[int], str] = "tasks[{}]".format
) -> list[Task]:
    """Tasks from dicts: {id?, places | pickup + dropoff, kind?, release_time?, priority?,
    deadline?} (a scenario's `tasks: {list: [...]}` or a JSON file's list); errors start with
    `label(k)` (default `tasks[k]`)."""
    tasks = []
    for k, item in enumerate(items):
        try:
            task = _task(k, item)
            _check_time("", "release_time", task.release_time)
        except ConfigError as exc:
            raise ConfigError(f"{label(k)}: {str(exc).removeprefix(': ')}") from None
        task.source = label(k)  # (its row in the input: errors found later name it)
        tasks.append(task)
    return sorted(tasks, key=lambda t: t.release_time)


def _check_time(item: str, key: str, value: float) -> None:
    """A time in seconds: a number, finite, >= 0."""
    if math.isnan(value):
        raise ConfigError(f"{item}: {key}: not a number (got nan): give seconds >= 0")
    if not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{item}: {key} must be a finite number of seconds >= 0, got {value:g}")


def _task(k: int, item: Any) -> Task:
    """One task from its dict (errors without the `tasks[k]` the caller puts first)."""
    if not isinstance(item, dict):
        raise ConfigError(f"a task is a mapping, got {item!r:.60}")
    unknown = set(item) - TASK_KEYS
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)} (known: {sorted(TASK_KEYS)})")
    if "places" in item:
        if not isinstance(item["places"], list | tuple) or not item["places"]:
            raise ConfigError(f"places: expected a list of place names, got {item['places']!r:.40}")
        places = tuple(str(p) for p in item["places"])
    elif "pickup" in item and "dropoff" in item:
        places = (str(item["pickup"]), str(item["dropoff"]))
    else:
        raise ConfigError("give 'places' or 'pickup' and 'dropoff'")
    try:
        deadline = item.get("deadline")
        return Task(
            id=str(item.get("id", f"task_{k}")),
            places=places,
            kind=str(item.get("kind", "delivery")),
            release_time=float(item.get("release_time", 0.0)),
            priority=int(item.get("priority", 0)),
            deadline=None if deadline in (None, "") else float(deadline),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None


def tasks_from_file(path: str | Path) -> list[Task]:
    """Timed orders from a CSV (a header row with the task keys) or a JSON list."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"task file not found: {path}")
    try:
        if file.suffix.lower() == ".json":
            items = json.loads(file.read_text())
            if not isinstance(items, list):
                raise ConfigError(f"{file}: expected a JSON list of tasks")
        else:
            with file.open(newline="") as f:
                reader = csv.DictReader(f)
                items = [{k: v for k, v in row.items() if v != ""} for row in reader]
                header = reader.fieldnames or []
            if not header:
                raise ConfigError(
                    f"{file}: the file is empty; a task file has a header row "
                    "(id,pickup,dropoff,release_time) and a row per task"
                )
            if not ({"pickup", "dropoff"} <= set(header) or "places" in header):
                raise ConfigError(
                    f"{file} line 1: the header {header[:6]!r:.80} names no "
                    "'pickup' and 'dropoff' columns (id,pickup,dropoff,"
                    "release_time)"
                )
    except RecursionError:
        raise ConfigError(f"{file}: nested too deeply to be a list of tasks") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error) as exc:
        raise ConfigError(f"{file}: cannot read tasks: {exc}") from None
    if not items:
        raise ConfigError(f"{file}: no tasks in it")
    in_csv = file.suffix.lower() != ".json"

    def label(k: int) -> str:  # a CSV row k is on line k + 2, after the header
        return f"{file} line {k + 2}: tasks[{k}]" if in_csv else f"{file}: tasks[{k}]"

    return task_list(items, label)


def poisson_tasks(
    rate_per_hour: float,
    pickups: Sequence[str],
    dropoffs: Sequence[str],
    rng: np.random.Generator,
    until: float = math.inf,
    start: float = 0.0,
) -> Iterator[Task]:
    """An endless (or until `until` s) stream of deliveries: orders arrive at each pick-up
    station as a Poisson process of `rate_per_hour`, each to a drop-off chosen at random."""
    if not (rate_per_hour > 0 and math.isfinite(rate_per_hour)):
        raise ConfigError(f"rate_per_hour must be > 0, got {rate_per_hour!r}")
    if not pickups or not dropoffs:
        raise ConfigError("a Poisson task stream needs pick-up and drop-off places")
    if rate_per_hour * len(pickups) > MAX_ORDERS_PER_HOUR:
        raise ConfigError(
            f"rate_per_hour {rate_per_hour:g} at {len(pickups)} pick-up stations is "
            f"{rate_per_hour * len(pickups):,.0f} orders an hour "
            f"({rate_per_hour * len(pickups) / 3600:,.0f} a second): at most "
            f"{MAX_ORDERS_PER_HOUR:,} an hour in all (a site with tens of thousands of robots "
            "serves a few thousand)"
        )
    return _arrivals(rate_per_hour * len(pickups) / 3600.0, pickups, dropoffs, rng, until, start)


def _arrivals(
    rate: float,
    pickups: Sequence[str],
    dropoffs: Sequence[str],
    rng: np.random.Generator,
    until: float,
    start: float,
) -> Iterator[Task]:
    """The stream itself (checked by `poisson_tasks` before the first order is asked for)."""
    t, k = start, 0
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t > until:
            return
        pickup = pickups[int(rng.integers(len(pickups)))]
        dropoff = dropoffs[int(rng.integers(len(dropoffs)))]
        yield Task(f"order_{k}", (pickup, dropoff), release_time=t)
        k += 1
