"""The kit's task manager: tasks revealed to keep a pool open, a scheduler's proposal checked
and applied, errands done where a robot stands, and the events and schedules the kit writes.

Rules (the kit's `TaskManager`, v3.1.0):

- **Reveal.** Tasks are opened while fewer than `reveal x team` are open; task k is line
  `k % m` of the task file and is revealed at the current tick.
- **Assignment** (at each plan adoption). A proposal of the wrong size is dropped whole (one
  "Invalid schedule size" error). Otherwise entry by entry, in robot order: a task not open
  (done or unknown) becomes -1; a task already taken earlier in the proposal becomes -1; a
  robot that has opened a task (done its first errand) keeps it; a task opened by another
  robot becomes -1. Each fix is a schedule error; the proposal itself is corrected in place.
- **Errands** (after every tick). A robot standing on its task's next errand (its discrete
  cell) does it: one errand a tick, an event `[tick, robot, task, errands done]`. The last
  errand finishes the task: counted, the robot freed (its proposal entry set to -1), the pool
  topped up.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.lorr.mapf import SharedEnvironment, Task
from fleetsim.lorr.views import TaskPool


class TaskManager:
    """Tasks of a kit run: `tasks` (errand locations per task-file line), `team` robots,
    `reveal` open tasks per robot."""

    def __init__(self, tasks: list[tuple[int, ...]], team: int, reveal: float) -> None:
        self.lines = tasks
        self.team = team
        self.open_limit = reveal * team
        self.ongoing: dict[int, Task] = {}
        self.all_tasks: list[Task] = []
        self.next_id = 0
        self.new_tasks: list[int] = []
        self.new_freeagents: list[int] = []
        self.current = [-1] * team
        self.next_errand = np.full(team, -1, dtype=np.int64)  # where each robot's is (-1: none)
        self.events: list[tuple[int, int, int, int]] = []
        self.finished = 0
        self.schedule_errors: list[tuple[str, int, int, int, int]] = []
        self.planner_schedule: list[list[tuple[int, int]]] = [[] for _ in range(team)]
        self.actual_schedule: list[list[tuple[int, int]]] = [[] for _ in range(team)]
        self.tick = 0  # the tick of the last update (the kit starts it uninitialised)

    # -- reveal ---------------------------------------------------------------------------

    def reveal(self, tick: int) -> None:
        """Open tasks until the pool is full."""
        while len(self.ongoing) < self.open_limit:
            task = Task(self.next_id, list(self.lines[self.next_id % len(self.lines)]), tick)
            self.ongoing[task.task_id] = task
            self.all_tasks.append(task)
            self.new_tasks.append(task.task_id)
            self.next_id += 1

    def clear_new(self) -> None:
        """Forget the robots freed and tasks revealed since the last plan was launched."""
        self.new_tasks.clear()
        self.new_freeagents.clear()

    # -- assignment -----------------------------------------------------------------------

    def set_assignment(self, proposal: list[int]) -> bool:
        """Check and apply a scheduler's proposal (corrected in place); False if dropped."""
        self._log(self.planner_schedule, proposal[: self.team])
        if proposal == self.current:  # nothing asked to change: nothing to check or apply
            return True
        if not self._validate(proposal):
            return False
        for task_id in self.current:
            if task_id >= 0:
                self.ongoing[task_id].agent_assigned = -1
        for robot, task_id in enumerate(proposal):
            self.current[robot] = task_id
            if task_id >= 0:
                self.ongoing[task_id].agent_assigned = robot
        self._log(self.actual_schedule, self.current)
        for robot, task_id in enumerate(self.current):
            self.next_errand[robot] = self.ongoing[task_id].get_next_loc() if task_id >= 0 else -1
        return True

    def _log(self, schedule: list[list[tuple[int, int]]], values: list[int]) -> None:
        """Append (tick, task) for each robot whose entry changed."""
        tick = self.tick
        for robot, task in enumerate(values):
            row = schedule[robot]
            if not row or row[-1][1] != task:
                row.append((tick, task))

    def _validate(self, proposal: list[int]) -> bool:
        when = self.tick + 1
        if len(proposal) != self.team:
            self.schedule_errors.append(("Invalid schedule size", -1, -1, -1, when))
            return False
        taken: dict[int, int] = {}
        for robot in range(self.team):
            task = proposal[robot]
            if task != -1 and task not in self.ongoing:
                self.schedule_errors.append(("task already finished", task, robot, -1, when))
                task = proposal[robot] = -1
            if task != -1 and task in taken:
                text = "task is already assigned by the second agent at the same time"
                self.schedule_errors.append((text, task, robot, taken[task], when))
                task = proposal[robot] = -1
            held = self.current[robot]
            if held != -1 and self.ongoing[held].idx_next_loc > 0 and task != held:
                text = "schedule agent to another task who is already opened a task"
                self.schedule_errors.append((text, task, robot, -1, when))
                task = proposal[robot] = held
            if task != -1:
                owner = self.ongoing[task].agent_assigned
                if self.ongoing[task].idx_next_loc > 0 and owner != robot:
                    self.schedule_errors.append(
                        ("task is already opened by other agent", task, robot, owner, when)
                    )
                    task = proposal[robot] = -1
            if task != -1:
                taken[task] = robot
        return True

    # -- errands --------------------------------------------------------------------------

    def update(self, locations: np.ndarray, proposal: list[int], tick: int) -> None:
        """After a tick: errands done where robots stand (`locations`, one a robot), finished
        tasks, the pool topped up."""
        self.tick = tick
        errand = self.next_errand
        for robot in np.flatnonzero((errand >= 0) & (locations == errand)).tolist():
            task_id = self.current[robot]
            task = self.ongoing[task_id]
            task.idx_next_loc += 1
            errand[robot] = task.get_next_loc()
            if task.is_finished():
                self.current[robot] = -1
                errand[robot] = -1
                del self.ongoing[task_id]
                task.t_completed = tick
                self.finished += 1
                self.new_freeagents.append(robot)
                if robot < len(proposal):
                    proposal[robot] = -1
            self.events.append((tick, robot, task_id, task.idx_next_loc))
        self.reveal(tick)

    # -- the shared environment and the output --------------------------------------------

    def sync(self, env: SharedEnvironment, snapshot: bool) -> dict[int, Task]:
        """Copy the pool, the schedule and what is new into the planner's environment; the
        pool's tasks as the planner will see them. `snapshot`: copy every task now (the
        planner reads while the loop moves on); else each task is copied as it is read."""
        if snapshot:
            pool = {task_id: task.copy() for task_id, task in self.ongoing.items()}
            env.task_pool = pool
        else:
            pool = self.ongoing
            env.task_pool = TaskPool(dict(pool))  # type: ignore[assignment]
        env.curr_task_schedule = list(self.current)
        env.new_freeagents = list(self.new_freeagents)
        env.new_tasks = list(self.new_tasks)
        return pool

    def tasks_json(self, cols: int) -> list[Any]:
        """Every revealed task: [id, tick revealed, [row, col, row, col, ...]]."""
        return [
            [t.task_id, t.t_revealed, [v for loc in t.locations for v in divmod(loc, cols)]]
            for t in self.all_tasks
        ]

    @staticmethod
    def schedule_strings(schedule: list[list[tuple[int, int]]]) -> list[str]:
        """Each robot's schedule as the kit writes it: "tick:task,tick:task"."""
        return [",".join(f"{tick}:{task}" for tick, task in row) for row in schedule]
