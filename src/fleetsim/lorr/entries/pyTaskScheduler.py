"""fleetsim's default task scheduler: each free robot, in index order, takes the open task whose
next errand is nearest (Manhattan distance) to where the robot will be."""

from __future__ import annotations

from typing import Any

import numpy as np


class pyTaskScheduler:  # noqa: N801 (the kit's class name)
    """Greedy nearest-task assignment; a robot keeps its task until it is done."""

    def __init__(self) -> None:
        self.env: Any = None
        self.free: set[int] = set()

    def initialize(self, preprocess_time_limit: int) -> None:
        """Nothing to prepare."""

    def plan(self, time_limit: int) -> list[int]:
        """The schedule: the current one, with free robots given the nearest open tasks."""
        env = self.env
        self.free.update(env.new_freeagents)
        schedule = list(env.curr_task_schedule)
        taken = {t for t in schedule if t != -1}
        pool = env.task_pool
        open_ids = [t for t in sorted(pool) if t not in taken and pool[t].agent_assigned == -1]
        if not open_ids or not self.free:
            return schedule
        cols = env.cols
        goals = np.array([pool[t].locations[pool[t].idx_next_loc] for t in open_ids])
        rows, columns = goals // cols, goals % cols
        left = np.ones(len(open_ids), dtype=bool)
        for robot in sorted(self.free):
            if schedule[robot] != -1:
                self.free.discard(robot)
                continue
            if not left.any():
                break
            r, c = divmod(env.curr_states[robot].location, cols)
            distance = np.abs(rows - r) + np.abs(columns - c)
            distance[~left] = np.iinfo(distance.dtype).max
            best = int(np.argmin(distance))
            schedule[robot] = open_ids[best]
            left[best] = False
            self.free.discard(robot)
        return schedule
