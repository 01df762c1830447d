"""`TaskBook`: a run's tasks. Those to come (a list or a stream, by release time) are released
as their time comes; released ones wait in the queue until a robot takes them; their numbers
(released, done, failed, throughput, cycle, queue and service times) and rows come from here.
A changed order mix (`mixes`, a fault) moves the pick-up and drop-off of the deliveries
released while it lasts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from fleetsim.fleet.tasks import Task, TaskStatus, check_tasks
from fleetsim.site import NavGraph


class TaskBook:
    """The tasks of one fleet: `tasks` (every task released so far, in order) and `queue`
    (released, not assigned)."""

    def __init__(self, tasks: Iterable[Task], graph: NavGraph) -> None:
        self.graph = graph
        self._source: Iterator[Task] = iter(tasks)
        self._upcoming: Task | None = None
        self.tasks: list[Task] = []
        self.queue: list[Task] = []
        self.closed: set[str] = set()  # stations closed (a fault): their orders wait
        # changed order mixes (a fault), by key: (pick-ups, drop-offs, their generator)
        self.mixes: dict[int, tuple[list[str], list[str], np.random.Generator]] = {}

    def release(self, now: float) -> None:
        """Release every task whose time has come (each checked against the site first)."""
        while True:
            if self._upcoming is None:
                self._upcoming = next(self._source, None)
                if self._upcoming is None:
                    return
                check_tasks([self._upcoming], self.graph)
            if self._upcoming.release_time > now:
                return
            task, self._upcoming = self._upcoming, None
            for pickups, dropoffs, rng in self.mixes.values():
                _remix(task, pickups, dropoffs, rng)
            task.mark(TaskStatus.RELEASED, now)
            self.tasks.append(task)
            self.queue.append(task)

    def close_station(self, name: str) -> None:
        """Station `name` is closed (a fault): orders through it wait."""
        self.closed.add(name)

    def reopen_station(self, name: str) -> None:
        """Station `name` takes orders again."""
        self.closed.discard(name)

    def change_mix(
        self, key: int, pickups: list[str], dropoffs: list[str], rng: np.random.Generator
    ) -> None:
        """Orders released from now on go from `pickups` to `dropoffs` (a changed order mix,
        `key` to undo it), drawn with `rng`."""
        self.mixes[key] = (pickups, dropoffs, rng)

    def restore_mix(self, key: int) -> None:
        """The order mix `key` changed is as it was."""
        self.mixes.pop(key, None)

    def first(self, room: int) -> list[Task]:
        """The first `room` waiting tasks, by priority, then release time (none through a
        closed station)."""
        self.queue.sort(key=lambda t: (-t.priority, t.release_time))
        if self.closed:
            return [t for t in self.queue if self.closed.isdisjoint(t.places)][:room]
        return self.queue[:room]

    def add(self, tasks: list[Task], now: float) -> None:
        """Release `tasks` now (an order burst), after checking them against the site."""
        check_tasks(tasks, self.graph)
        for task in tasks:
            task.release_time = now
            task.mark(TaskStatus.RELEASED, now)
            self.tasks.append(task)
            self.queue.append(task)

    def assign(self, task: Task, robot: str, now: float) -> None:
        """`robot` takes `task` off the queue."""
        self.queue.remove(task)
        task.robot = robot
        task.mark(TaskStatus.ASSIGNED, now)

    def done(self) -> list[Task]:
        """The tasks done so far."""
        return [t for t in self.tasks if t.status is TaskStatus.DONE]

    def counts(self, now: float) -> dict[str, Any]:
        """Released, completed and failed so far, and the throughput."""
        done = sum(t.status is TaskStatus.DONE for t in self.tasks)
        return {
            "tasks_released": len(self.tasks),
            "tasks_completed": done,
            "tasks_failed": sum(t.status is TaskStatus.FAILED for t in self.tasks),
            "throughput_per_hour": done / now * 3600 if now > 0 else 0.0,
        }

    def kpis(self, now: float) -> dict[str, Any]:
        """The counts and the spread of cycle (released to done), queue (released to
        assigned: waiting for a robot) and service (assigned to done: the robot's part)
        times."""
        done = self.done()
        cycles = np.array([t.cycle_time for t in done], dtype=np.float64)
        queued = np.array([t.times["assigned"] - t.times["released"] for t in done])
        return {
            **self.counts(now),
            "cycle_time_s": _spread(cycles),
            "queue_time_s": _spread(queued),
            "service_time_s": _spread(cycles - queued),
        }

    def done_by_robot(self) -> dict[str | None, int]:
        """Tasks done, by robot name."""
        counts: dict[str | None, int] = {}
        for t in self.done():
            counts[t.robot] = counts.get(t.robot, 0) + 1
        return counts

    def rows(self) -> list[dict[str, Any]]:
        """One row per task: places, status, robot, life-cycle times, cycle time, lateness and
        the reason it failed."""
        stamps = [s.value for s in TaskStatus if s is not TaskStatus.WAITING]
        return [
            {
                "task": t.id,
                "kind": t.kind,
                "places": " > ".join(t.places),
                "priority": t.priority,
                "status": t.status.value,
                "robot": t.robot,
                "release_time": t.release_time,
                **{f"{name}_at": t.times.get(name) for name in stamps},
                "cycle_time_s": t.cycle_time,
                "deadline": t.deadline,
                "late": t.deadline is not None and t.times.get("done", math.inf) > t.deadline,
                "reason": t.reason,
            }
            for t in self.tasks
        ]


def _spread(x: np.ndarray) -> dict[str, float | None]:
    if not x.size:
        return dict.fromkeys(("mean", "p50", "p95", "max"))
    p50, p95 = np.percentile(x, [50, 95]).tolist()
    return {"mean": float(x.mean()), "p50": p50, "p95": p95, "max": float(x.max())}


def _remix(task: Task, pickups: list[str], dropoffs: list[str], rng: np.random.Generator) -> None:
    """A delivery released while the order mix is changed: picked up at one of `pickups` and
    dropped off at one of `dropoffs` (drawn at random; an empty list leaves that end)."""
    if task.kind != "delivery" or len(task.places) < 2:
        return
    places = list(task.places)
    if pickups:
        places[0] = pickups[int(rng.integers(len(pickups)))]
    if dropoffs:
        places[-1] = dropoffs[int(rng.integers(len(dropoffs)))]
    task.places = tuple(places)
