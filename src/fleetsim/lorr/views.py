"""What entries read in their environment's lists, made on demand: the kit copies every
robot's state into both environments every tick, which for 10,000 robots would cost more than
the tick itself. These read-only sequences hand out a fresh object for each element read, so
an entry that changes what it reads changes nothing else, as in the kit."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from fleetsim.lorr.mapf import Action, Counter, Delay, State, Task


class _View(Sequence[Any]):
    def __len__(self) -> int:
        raise NotImplementedError

    def _item(self, index: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        i = int(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"index {index} out of range for {n} robots")
        return self._item(i)

    def __iter__(self) -> Iterator[Any]:
        return (self._item(i) for i in range(len(self)))

    def __repr__(self) -> str:
        return f"[{', '.join(repr(self._item(i)) for i in range(min(len(self), 5)))}, ...]"


class StateView(_View):
    """Robots' states from a snapshot of the loop's arrays."""

    def __init__(
        self,
        location: np.ndarray,
        orientation: np.ndarray,
        count: np.ndarray,
        in_delay: np.ndarray,
        timestep: int,
        max_count: int,
    ) -> None:
        self.location, self.orientation, self.counts = location, orientation, count
        self.in_delay, self.timestep, self.max_count = in_delay, timestep, max_count

    def __len__(self) -> int:
        return len(self.location)

    def _item(self, i: int) -> State:
        state = State(int(self.location[i]), self.timestep, int(self.orientation[i]))
        state._counter = Counter(int(self.counts[i]), self.max_count)
        state._delay = Delay(inDelay=bool(self.in_delay[i]))
        return state


class StateCopies(_View):
    """A copy of each of a list of states (the executor's predictions) as it is read."""

    def __init__(self, states: Sequence[State]) -> None:
        self.states = states

    def __len__(self) -> int:
        return len(self.states)

    def _item(self, i: int) -> State:
        return copy_state(self.states[i])


class QueueCopies(_View):
    """A copy of each robot's staged actions as it is read: of the queues as they are then
    (`snapshot=False`: the caller reads before they change) or as they were when made."""

    def __init__(self, queues: Sequence[Sequence[Action]], snapshot: bool) -> None:
        self.queues: Sequence[Sequence[Action]] = [tuple(q) for q in queues] if snapshot else queues

    def __len__(self) -> int:
        return len(self.queues)

    def _item(self, i: int) -> list[Action]:
        return list(self.queues[i])


class TaskPool(Mapping[int, Task]):
    """`env.task_pool`: task id -> a copy of the task, made as it is read."""

    def __init__(self, tasks: Mapping[int, Task]) -> None:
        self.tasks = tasks

    def __getitem__(self, task_id: int) -> Task:
        return self.tasks[task_id].copy()

    def __iter__(self) -> Iterator[int]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.tasks


def copy_state(state: State) -> State:
    """A copy of `state`."""
    return state.copy()
