"""Task assignment policies. A policy is any object with `assign(fleet, idle, tasks)` returning
(robot index, task) pairs; `idle` are the indices of robots free for work and `tasks` the
released, unassigned tasks in order (priority first, then release time). Two are built in:
`nearest` (each task in turn to the idle robot nearest its first place) and `greedy` (over all
idle robots and waiting tasks, the closest pair first: fewer long empty drives)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.fleet.tasks import Task

if TYPE_CHECKING:
    from fleetsim.fleet.manager import FleetManager


class AssignmentPolicy(Protocol):
    """How a fleet manager pairs idle robots with waiting tasks: any object with `assign`."""

    def assign(
        self, fleet: FleetManager, idle: list[int], tasks: list[Task]
    ) -> list[tuple[int, Task]]:
        """(robot index, task) pairs for some of `idle` and `tasks`; each robot and task at most
        once."""


def _distances(fleet: FleetManager, idle: list[int], tasks: list[Task]) -> np.ndarray:
    """Straight-line distance (idle robots x tasks) from each robot to each task's first place."""
    graph = fleet.graph
    here = fleet.positions()[idle]
    first = graph.xy[[graph.node(t.places[0]) for t in tasks]]
    d: np.ndarray = np.hypot(*(here[:, None, :] - first[None, :, :]).transpose(2, 0, 1))
    return d


class Nearest:
    """Each task in turn (highest priority, then oldest) to the nearest idle robot."""

    def assign(
        self, fleet: FleetManager, idle: list[int], tasks: list[Task]
    ) -> list[tuple[int, Task]]:
        """Each task in turn (by priority, then release) to the nearest idle robot left."""
        if not idle or not tasks:
            return []
        tasks = tasks[: len(idle)]
        d = _distances(fleet, idle, tasks)
        pairs, free = [], np.ones(len(idle), dtype=bool)
        for k, task in enumerate(tasks):
            r = int(np.argmin(np.where(free, d[:, k], np.inf)))
            free[r] = False
            pairs.append((idle[r], task))
        return pairs


class Greedy:
    """The closest (robot, task) pair over everything waiting, then the next closest, ...;
    tasks of higher priority are matched before any of lower priority."""

    def assign(
        self, fleet: FleetManager, idle: list[int], tasks: list[Task]
    ) -> list[tuple[int, Task]]:
        """The robot-task pairs by distance, shortest first, each robot and task once."""
        if not idle or not tasks:
            return []
        d = _distances(fleet, idle, tasks)
        pairs: list[tuple[int, Task]] = []
        for level in sorted({t.priority for t in tasks}, reverse=True):
            cols = [k for k, t in enumerate(tasks) if t.priority == level]
            sub = d[:, cols].copy()
            for _ in range(min(len(idle) - len(pairs), len(cols))):
                r, c = np.unravel_index(int(np.argmin(sub)), sub.shape)
                if not np.isfinite(sub[r, c]):
                    break
                pairs.append((idle[int(r)], tasks[cols[int(c)]]))
                sub[r, :] = np.inf
                sub[:, c] = np.inf
                d[r, :] = np.inf
        return pairs


POLICIES: dict[str, type] = {"nearest": Nearest, "greedy": Greedy}


def policy_of(spec: str | AssignmentPolicy) -> AssignmentPolicy:
    """The policy named `spec` ("nearest", "greedy"), or `spec` itself when it is a policy."""
    if isinstance(spec, str):
        if spec not in POLICIES:
            raise ConfigError(f"unknown assignment '{spec}' (built in: {', '.join(POLICIES)})")
        policy: AssignmentPolicy = POLICIES[spec]()
        return policy
    if not callable(getattr(spec, "assign", None)):
        raise ConfigError(
            f"an assignment policy needs an assign(fleet, idle, tasks) method: {spec!r}"
        )
    return spec
