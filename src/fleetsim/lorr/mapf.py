"""The `MAPF` module a LoRR entry imports (`import MAPF`), in pure Python: the types the kit's
pybind11 bridge exposes, with the same names, fields and values, so that entries written for
the kit run unmodified. `hosting()` puts it in `sys.modules` while entries are loaded and
called (it is not a top-level package of its own); `load_entry` loads an entry's class from
its file.

Containers are Python lists and dicts (the kit's are list-like and dict-like: `len`, indexing,
iteration, `append`, `del x[a:b]`); `goal_locations[i]` holds `PairInt`s, read with
`pair_first` and `pair_second`; `State(location, timestep, orientation)` has a `Counter`
(`count`, `maxCount`, 10 by default as in the kit) and a `Delay` (`minDelay`, `maxDelay`,
`inDelay`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from fleetsim.errors import ConfigError


class Action(IntEnum):
    """A robot's action: forward, clockwise, counter-clockwise, wait; NA for none."""

    FW = 0
    CR = 1
    CCR = 2
    W = 3
    NA = 4


class ExecutionCommand(IntEnum):
    """The executor's word for each robot every tick."""

    GO = 0
    STOP = 1


@dataclass
class Counter:
    """How far a multi-tick action has come: `count` of `maxCount` ticks."""

    count: int = 0
    maxCount: int = 10  # noqa: N815 (the kit's name)


@dataclass
class Delay:
    """A robot's delay: its bounds and whether one is running."""

    minDelay: int = 0  # noqa: N815 (the kit's names)
    maxDelay: int = 0  # noqa: N815
    inDelay: bool = False  # noqa: N815


class State:
    """A robot's state: location (row * cols + col), orientation (0 east, 1 south, 2 west,
    3 north), timestep, the counter of the action in progress, its delay."""

    __slots__ = ("_counter", "_delay", "location", "orientation", "timestep")

    def __init__(self, location: int = -1, timestep: int = -1, orientation: int = -1) -> None:
        self.location = location
        self.timestep = timestep
        self.orientation = orientation
        self._counter: Counter | None = None  # (made when first read: most never are)
        self._delay: Delay | None = None

    @property
    def counter(self) -> Counter:
        """The counter of the action in progress (`count` of `maxCount` ticks)."""
        if self._counter is None:
            self._counter = Counter()
        return self._counter

    @counter.setter
    def counter(self, value: Counter) -> None:
        self._counter = value

    @property
    def delay(self) -> Delay:
        """The robot's delay."""
        if self._delay is None:
            self._delay = Delay()
        return self._delay

    @delay.setter
    def delay(self, value: Delay) -> None:
        self._delay = value

    def copy(self) -> State:
        """A copy (its counter and delay copied too)."""
        out = State.__new__(State)
        out.location, out.timestep, out.orientation = self.location, self.timestep, self.orientation
        c, d = self._counter, self._delay
        out._counter = None if c is None else Counter(c.count, c.maxCount)
        out._delay = None if d is None else Delay(d.minDelay, d.maxDelay, d.inDelay)
        return out

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self.location == other.location
            and self.orientation == other.orientation
            and self.counter.count == other.counter.count
        )

    def __hash__(self) -> int:
        return hash((self.location, self.orientation, self.counter.count))

    def __repr__(self) -> str:
        return (
            f"State(location={self.location}, orientation={self.orientation}, "
            f"timestep={self.timestep}, counter={self.counter.count})"
        )


class PairInt(tuple[int, int]):
    """`pair<int, int>`: (location, time revealed) in `goal_locations`."""

    def __new__(cls, first: int, second: int) -> PairInt:
        """The pair (first, second)."""
        return super().__new__(cls, (first, second))

    @classmethod
    def of(cls, first: int, second: int) -> PairInt:
        """The pair, made without the constructor's call overhead (the loop makes thousands)."""
        return tuple.__new__(cls, (first, second))


def pair_first(pair: Any) -> int:
    """The first of a pair."""
    return int(pair[0])


def pair_second(pair: Any) -> int:
    """The second of a pair."""
    return int(pair[1])


@dataclass
class Task:
    """A task: its errands' locations, the next one to do, who does it, when revealed and
    completed (-1: not yet)."""

    task_id: int
    locations: list[int]
    t_revealed: int = -1
    t_completed: int = -1
    idx_next_loc: int = 0
    agent_assigned: int = -1

    def copy(self) -> Task:
        """A copy (its own list of locations)."""
        return Task(
            self.task_id,
            list(self.locations),
            self.t_revealed,
            self.t_completed,
            self.idx_next_loc,
            self.agent_assigned,
        )

    def get_next_loc(self) -> int:
        """The location of the next errand (-1 when all are done)."""
        return self.locations[self.idx_next_loc] if not self.is_finished() else -1

    def is_finished(self) -> bool:
        """Whether every errand is done."""
        return self.idx_next_loc >= len(self.locations)


@dataclass
class Plan:
    """A planner's answer: a list of actions for each robot, one a step."""

    actions: list[list[Action]] = field(default_factory=list)


@dataclass
class SharedEnvironment:
    """What entries read (`self.env`): the kit binds these fields."""

    num_of_agents: int = 0
    rows: int = 0
    cols: int = 0
    map_name: str = ""
    map: list[int] = field(default_factory=list)
    file_storage_path: str = ""
    goal_locations: list[list[PairInt]] = field(default_factory=list)
    curr_timestep: int = 0
    system_timestep: int = 0
    curr_states: list[State] = field(default_factory=list)
    system_states: list[State] = field(default_factory=list)
    start_states: list[State] = field(default_factory=list)
    task_pool: dict[int, Task] = field(default_factory=dict)
    new_tasks: list[int] = field(default_factory=list)
    new_freeagents: list[int] = field(default_factory=list)
    curr_task_schedule: list[int] = field(default_factory=list)
    staged_actions: list[list[Action]] = field(default_factory=list)
    min_planner_communication_time: int = 0
    action_time: int = 0
    max_counter: int = 1


_EXPORTS = (
    "Action",
    "ExecutionCommand",
    "Counter",
    "Delay",
    "State",
    "PairInt",
    "pair_first",
    "pair_second",
    "Task",
    "Plan",
    "SharedEnvironment",
)


def module() -> ModuleType:
    """A fresh `MAPF` module object with the kit's types."""
    mapf = ModuleType("MAPF", "The LoRR start kit's types, as fleetsim hosts them.")
    for name in _EXPORTS:
        setattr(mapf, name, globals()[name])
    for name, kind in (
        ("VectorInt", list),
        ("VectorState", list),
        ("VectorAction", list),
        ("VectorVectorAction", list),
        ("TaskPool", dict),
    ):
        setattr(mapf, name, kind)
    return mapf


@contextlib.contextmanager
def hosting() -> Iterator[ModuleType]:
    """`import MAPF` finds fleetsim's module inside the block (whatever was there before is
    put back after)."""
    before = sys.modules.get("MAPF")
    mapf = sys.modules["MAPF"] = module()
    try:
        yield mapf
    finally:
        if before is None:
            sys.modules.pop("MAPF", None)
        else:
            sys.modules["MAPF"] = before


ENTRY_CLASSES = {
    "planner": "pyMAPFPlanner",
    "scheduler": "pyTaskScheduler",
    "executor": "pyExecutor",
}


def load_entry(path: str | Path, kind: str) -> Any:
    """An instance of the entry class in the Python file `path` (`kind`: planner, scheduler
    or executor; the class is the kit's name for it, constructed with no arguments). Call it
    inside `hosting()`."""
    file = Path(path)
    name = ENTRY_CLASSES.get(kind)
    if name is None:
        raise ConfigError(f"unknown entry kind {kind!r}: one of {', '.join(ENTRY_CLASSES)}")
    if not file.is_file():
        raise ConfigError(f"{kind} entry not found: {file}")
    if file.suffix != ".py":
        raise ConfigError(
            f"{file}: a {kind} entry is a Python file (.py), as the kit's "
            f"python/user_{kind}/py{kind}.py is"
        )
    spec = importlib.util.spec_from_file_location(f"lorr_{kind}_{abs(hash(file))}", file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{file}: cannot be loaded as a Python module")
    entry = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)  # modules beside the entry import, as in the kit's folders
    try:
        spec.loader.exec_module(entry)
    except SystemExit as exc:
        raise ConfigError(
            f"{file}: the {kind} entry called sys.exit({exc.code!r}) while it was "
            "loaded (the kit would stop there too): remove it"
        ) from None
    except Exception as exc:
        raise ConfigError(
            f"{file}: the {kind} entry failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        sys.path.remove(folder)
    cls = getattr(entry, name, None)
    if cls is None:
        raise ConfigError(f"{file}: no class {name} (the kit loads a {kind} by that name)")
    try:
        return cls()
    except SystemExit as exc:
        raise ConfigError(f"{file}: {name}() called sys.exit({exc.code!r})") from None
    except Exception as exc:
        raise ConfigError(f"{file}: {name}() failed: {type(exc).__name__}: {exc}") from exc
