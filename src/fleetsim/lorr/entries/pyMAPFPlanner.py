"""fleetsim's default planner: PIBT (priority inheritance with backtracking) on the kit's grid
with turns, a few steps a call: enough to cover one plan period.

Each step every robot either moves to the cell ahead or stays (waiting, or turning a quarter
towards the neighbour nearest its goal by true shortest-path distance, from a breadth-first
search kept for reuse). Robots decide in priority order; a robot's priority grows every step
it is away from its goal and drops when it gets there. A robot that wants an occupied cell
pushes the occupant ahead (it must move, or the asker stays; one that cannot turns towards a
free cell and moves there when it can, to make way); no one moves into the cell of a robot
whose move is being decided, so there are no swaps and no rotating cycles. The steps are
collision-free in the grid's own time; `pyExecutor` keeps their order of passing. A robot
with more than two plans' worth of actions staged (delayed, or waiting its turn) stays put in
new plans until it catches up."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import MAPF
import numpy as np

from fleetsim.lorr.search import distances_from

CACHE_BYTES = 256 << 20  # memory for the distance maps kept (one a goal cell)
ASIDE = 4  # steps a robot keeps to the way it turned to make way
BUSY = 2  # plans' worth of staged actions after which a robot is left to catch up
FAR = 1 << 30  # (as fleetsim.lorr.search's: unreachable)


class pyMAPFPlanner:  # noqa: N801 (the kit's class name)
    """PIBT with turns, `horizon` steps a call."""

    def __init__(self) -> None:
        self.env: Any = None
        self.distances: OrderedDict[int, np.ndarray] = OrderedDict()

    def initialize(self, preprocess_time_limit: int) -> None:
        """The map's moves, the steps a plan covers, the robots' starting priorities."""
        env = self.env
        self.moves = (1, env.cols, -1, -env.cols)
        self.free = [v == 0 for v in env.map]
        cells = len(self.free)
        self.neighbours = np.array(
            [[self.ahead(c, h) for c in range(cells)] for h in range(4)], dtype=np.int64
        )  # fmt: skip (4, cells): -1 where blocked
        self.cache = max(16, CACHE_BYTES // max(1, 4 * cells))
        period = math.ceil(env.min_planner_communication_time / max(1, env.action_time))
        self.horizon = max(1, math.ceil(period / max(1, env.max_counter))) + 1
        n = env.num_of_agents
        self.priority = [i / max(1, n) for i in range(n)]
        self.aside: dict[int, tuple[int, int]] = {}  # robot -> (heading, until step)
        self.clock = 0

    def ahead(self, cell: int, heading: int) -> int:
        """The free cell ahead, or -1."""
        cols: int = self.env.cols
        rows: int = self.env.rows
        r, c = divmod(cell, cols)
        dr, dc = ((0, 1), (1, 0), (0, -1), (-1, 0))[heading]
        nr, nc = r + dr, c + dc
        if 0 <= nr < rows and 0 <= nc < cols and self.free[nr * cols + nc]:
            return nr * cols + nc
        return -1

    def distance_map(self, goal: int) -> np.ndarray:
        """Moves from every cell to `goal` (a breadth-first search, kept for reuse)."""
        found = self.distances.get(goal)
        if found is not None:
            self.distances.move_to_end(goal)
            return found
        dist = distances_from(self.neighbours, goal)
        self.distances[goal] = dist
        if len(self.distances) > self.cache:
            self.distances.popitem(last=False)
        return dist

    def wanted(self, robot: int) -> int:
        """The heading towards the robot's goal (its own heading on ties), or -1 (no goal, or
        there)."""
        goal: int = self.goals[robot]
        here: int = self.pos[robot]
        if goal < 0 or goal == here:
            return -1
        dist = self.distance_map(goal)
        best, best_key = -1, (FAR, 1)
        for heading in range(4):
            cell = self.ahead(here, heading)
            if cell >= 0 and dist[cell] < dist[here]:
                key = (dist[cell], 0 if heading == self.head[robot] else 1)
                if key < best_key:
                    best, best_key = heading, key
        return best

    def plan(self, time_limit: int) -> list[list[Any]]:
        """`horizon` steps of PIBT for every robot."""
        env = self.env
        n = env.num_of_agents
        self.pos = [s.location for s in env.curr_states]
        self.head = [s.orientation for s in env.curr_states]
        self.goals = [MAPF.pair_first(g[0]) if g else -1 for g in env.goal_locations]
        limit = BUSY * self.horizon
        self.busy = [len(q) >= limit for q in env.staged_actions]
        actions: list[list[Any]] = [[] for _ in range(n)]
        for _ in range(self.horizon):
            for robot in range(n):
                if self.goals[robot] < 0 or self.goals[robot] == self.pos[robot]:
                    self.priority[robot] %= 1.0
                else:
                    self.priority[robot] += 1.0
            self.occupant = {p: r for r, p in enumerate(self.pos)}
            self.next: list[int] = [-1] * n
            self.taken: dict[int, int] = {}
            self.deciding: set[int] = set()
            self.clock += 1
            self.aside = {r: a for r, a in self.aside.items() if a[1] >= self.clock}
            for robot in sorted(range(n), key=lambda r: -self.priority[r]):
                if self.next[robot] < 0:
                    self.decide(robot, pushed=False)
            for robot in range(n):
                actions[robot].append(self.act(robot))
        return actions

    def decide(self, robot: int, pushed: bool) -> bool:
        """Move `robot` ahead if it wants to (or is pushed) and can; else it stays."""
        self.deciding.add(robot)
        here, heading = self.pos[robot], self.head[robot]
        cell = self.ahead(here, heading)
        aside = self.aside.get(robot, (-1, 0))[0]
        willing = not self.busy[robot] and (
            pushed or aside == heading or (aside < 0 and self.wanted(robot) == heading)
        )
        if willing and cell >= 0 and cell not in self.taken:
            other = self.occupant.get(cell, -1)
            if other < 0 or (other not in self.deciding and self.next[other] != cell):
                self.taken[cell], self.next[robot] = robot, cell
                if other < 0 or self.next[other] >= 0 or self.decide(other, pushed=True):
                    self.deciding.discard(robot)
                    return True
        self.taken[here], self.next[robot] = robot, here
        self.deciding.discard(robot)
        if pushed and not self.busy[robot]:
            self.make_way(robot)
        return False

    def make_way(self, robot: int) -> None:
        """A pushed robot that could not move turns towards a free cell (an empty one if it
        can, nearest its goal), so that it can move out of the way next step."""
        here, goal = self.pos[robot], self.goals[robot]
        dist = self.distance_map(goal) if goal >= 0 else None
        best, best_key = -1, (2, FAR)
        for heading in range(4):
            cell = self.ahead(here, heading)
            if heading == self.head[robot] or cell < 0 or cell in self.taken:
                continue
            other = self.occupant.get(cell, -1)
            if other in self.deciding:
                continue
            key = (0 if other < 0 else 1, dist[cell] if dist is not None else 0)
            if key < best_key:
                best, best_key = heading, key
        if best >= 0:
            self.aside[robot] = (best, self.clock + ASIDE)

    def act(self, robot: int) -> Any:
        """The step's action for `robot`; its position and heading after it."""
        if self.next[robot] != self.pos[robot]:
            self.pos[robot] = self.next[robot]
            self.aside.pop(robot, None)
            return MAPF.Action.FW
        want = self.aside.get(robot, (-1 if self.busy[robot] else self.wanted(robot), 0))[0]
        if want < 0 or want == self.head[robot]:
            return MAPF.Action.W
        turn = (want - self.head[robot]) % 4
        self.head[robot] = (self.head[robot] + (3 if turn == 3 else 1)) % 4
        return MAPF.Action.CCR if turn == 3 else MAPF.Action.CR
