"""`GridFleet`: robots moving cell to cell on a grid map, every agent at once as arrays (the
array API under the PettingZoo and Gymnasium environments).

Each step every agent takes one of five actions: 0 wait, 1 up (row - 1), 2 down, 3 left
(column - 1), 4 right, as POGEMA numbers them. A move into an obstacle or off the map is a wait.
Conflicts follow `collisions`:

- `"block"` (the default; MAPF's rules): agents that would meet in a cell (a vertex conflict)
  or swap cells (an edge conflict) all stay where they were, and so, in turn, does anyone
  moving into a cell whose agent stays; no two agents ever share a cell or swap;
- `"priority"`: as `"block"`, but in a vertex conflict the agent with the lowest index moves
  and the others stay (an agent that stays keeps its cell against everyone);
- `"soft"`: no conflicts; agents may share cells (as POGEMA's soft collisions).

Observations are POGEMA's layout, (agents, 3, 2r+1, 2r+1) float32 centred on each agent:
obstacles (and the map's outside), the other agents, and the goal (its cell when inside the
window, else the window's border cell nearest it). Lifelong: an agent on its goal scores and is
given a new one (a free cell it can reach); one-shot: it scores once, finishes, and leaves the
map (it blocks no one). Rewards are `reward(state)`: by default 1.0 on reaching a goal.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from fleetsim.errors import ConfigError

MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)
COLLISIONS = ("block", "priority", "soft")


@dataclass
class GridState:
    """What a reward function sees after a step, all (agents,) arrays but the map."""

    blocked: np.ndarray  # (H, W) bool
    positions: np.ndarray  # (N, 2) row, column
    goals: np.ndarray  # (N, 2) the goals they had this step
    reached: np.ndarray  # bool: on its goal after this step
    moved: np.ndarray  # bool: changed cell
    stopped: np.ndarray  # bool: asked to move, kept where it was (a wall or a conflict)
    active: np.ndarray  # bool: still on the map (one-shot: not finished before this step)
    step: int = 0


def goal_reward(state: GridState) -> np.ndarray:
    """1.0 for each agent that reached its goal this step."""
    return state.reached.astype(np.float32)


@dataclass(frozen=True)
class GridConfig:
    """A grid task.

    Attributes:
        agents: how many.
        obs_radius: the observation window is 2r+1 cells square.
        lifelong: a new goal on reaching one (False: one-shot, the agent finishes).
        collisions: `"block"`, `"priority"` or `"soft"` (see the module's text).
        max_steps: steps in an episode (then every agent is truncated).
        reward: the reward function of a step's `GridState`.
    """

    agents: int = 64
    obs_radius: int = 5
    lifelong: bool = True
    collisions: Literal["block", "priority", "soft"] = "block"
    max_steps: int = 256
    reward: Callable[[GridState], np.ndarray] = field(default=goal_reward)

    def __post_init__(self) -> None:
        if not (isinstance(self.agents, int) and self.agents >= 1):
            raise ConfigError(
                f"GridConfig: agents must be a whole number >= 1, got {self.agents!r}"
            )
        if not (isinstance(self.obs_radius, int) and self.obs_radius >= 1):
            raise ConfigError(f"GridConfig: obs_radius must be >= 1, got {self.obs_radius!r}")
        if self.collisions not in COLLISIONS:
            raise ConfigError(
                f"GridConfig: collisions '{self.collisions}': choose {', '.join(COLLISIONS)}"
            )
        if not (isinstance(self.max_steps, int) and self.max_steps >= 1):
            raise ConfigError(f"GridConfig: max_steps must be >= 1, got {self.max_steps!r}")


def random_map(size: int, density: float = 0.2, seed: int = 0) -> np.ndarray:
    """A size x size map with about `density` of its cells blocked, at random (seeded)."""
    if not 0 <= density < 1:
        raise ConfigError(f"random_map: density is a fraction below 1, got {density!r}")
    return np.random.default_rng(seed).random((size, size)) < density


def components(blocked: np.ndarray) -> np.ndarray:
    """Each free cell's connected component (4-neighbour), -1 for blocked cells, (H, W)."""
    h, w = blocked.shape
    label = np.full(h * w, -1, dtype=np.int64)
    free = ~blocked.ravel()
    count = 0
    for start in np.flatnonzero(free).tolist():
        if label[start] >= 0:
            continue
        label[start] = count
        queue = collections.deque([start])
        while queue:
            cell = queue.popleft()
            r, c = divmod(cell, w)
            for n, ok in ((cell - w, r > 0), (cell + w, r < h - 1), (cell - 1, c > 0),
                          (cell + 1, c < w - 1)):  # fmt: skip
                if ok and free[n] and label[n] < 0:
                    label[n] = count
                    queue.append(n)
        count += 1
    return label.reshape(h, w)


class GridFleet:
    """Agents on a grid map as arrays (see the module's text): `reset(seed)`, `step(actions)`."""

    def __init__(self, blocked: np.ndarray, config: GridConfig | None = None) -> None:
        grid = np.asarray(blocked, dtype=bool)
        if grid.ndim != 2 or grid.size < 2:
            raise ConfigError(f"GridFleet: the map must be a 2-D grid, got shape {grid.shape}")
        self.blocked, self.config = grid, config or GridConfig()
        self.height, self.width = grid.shape
        self.labels = components(grid)
        sizes = np.bincount(self.labels[self.labels >= 0])
        self._component = int(np.argmax(sizes)) if len(sizes) else -1
        room = int(sizes.max()) if len(sizes) else 0
        if room < self.config.agents + 1:
            raise ConfigError(
                f"GridFleet: {self.config.agents} agents need as many free connected cells and "
                f"one more; the map's largest connected area has {room}"
            )
        self._cells = np.flatnonzero(self.labels.ravel() == self._component)
        r = self.config.obs_radius
        self._padded = np.pad(grid, r, constant_values=True).astype(np.float32)
        self._windows = np.lib.stride_tricks.sliding_window_view(self._padded, (2 * r + 1,) * 2)
        self._occupied = np.zeros_like(self._padded)
        self.rng = np.random.default_rng(0)
        self.positions = np.zeros((self.config.agents, 2), dtype=np.int64)
        self.goals = np.zeros_like(self.positions)
        self.active = np.ones(self.config.agents, dtype=bool)
        self.steps = 0

    # -- episodes --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Agents on distinct free cells of the map's largest connected area, each with a goal
        there; returns the observations. The same seed gives the same episode."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.config.agents
        starts = self.rng.choice(self._cells, size=n, replace=False)
        self.positions = np.stack(np.divmod(starts, self.width), axis=1)
        self.goals = self._new_goals(self.positions)
        self.active = np.ones(n, dtype=bool)
        self.steps = 0
        return self.observe()

    def _new_goals(self, positions: np.ndarray) -> np.ndarray:
        """A goal for each of `positions`: a random cell of the same area, not its own."""
        cells = self._cells
        picks = self.rng.integers(0, len(cells), size=len(positions))
        same = cells[picks] == positions[:, 0] * self.width + positions[:, 1]
        picks[same] = (picks[same] + 1) % len(cells)
        return np.stack(np.divmod(cells[picks], self.width), axis=1)

    # -- a step ----------------------------------------------------------------------------------

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, GridState]:
        """Every agent's action (agents,) ints 0-4 -> observations, rewards, terminated,
        truncated, and the step's `GridState`. Finished agents' actions are ignored."""
        a = np.asarray(actions)
        n = self.config.agents
        if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
            raise ConfigError(
                f"GridFleet.step: actions must be {n} integers, got {a.dtype} {a.shape}"
            )
        if a.size and (a.min() < 0 or a.max() > 4):
            raise ConfigError("GridFleet.step: actions are 0 (wait), 1 up, 2 down, 3 left, 4 right")
        was_active = self.active.copy()
        a = np.where(was_active, a, 0)
        want = self.positions + MOVES[a]
        inside = (
            (want[:, 0] >= 0)
            & (want[:, 0] < self.height)
            & (want[:, 1] >= 0)
            & (want[:, 1] < self.width)
        )
        open_cell = inside.copy()
        open_cell[inside] = ~self.blocked[want[inside, 0], want[inside, 1]]
        want[~open_cell] = self.positions[~open_cell]
        if self.config.collisions != "soft":
            want = self._resolve(want, was_active)
        moved = np.any(want != self.positions, axis=1)
        stopped = (a != 0) & ~moved & was_active
        self.positions = want
        reached = was_active & np.all(want == self.goals, axis=1)
        self.steps += 1
        state = GridState(self.blocked, want.copy(), self.goals.copy(), reached, moved, stopped,
                          was_active, self.steps)  # fmt: skip
        rewards = np.asarray(self.config.reward(state), dtype=np.float32)
        if self.config.lifelong:
            if reached.any():
                self.goals[reached] = self._new_goals(want[reached])
            terminated = np.zeros(n, dtype=bool)
        else:
            self.active &= ~reached
            terminated = ~self.active
        truncated = self.active & (self.steps >= self.config.max_steps)
        return self.observe(), rewards, terminated, truncated, state

    def _resolve(self, want: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Keep agents from sharing a cell or swapping (see `collisions`), to a fixed point."""
        here = self.positions
        width = self.width
        here_id = here[:, 0] * width + here[:, 1]
        priority = self.config.collisions == "priority"
        index = np.arange(len(want))
        occupant = np.full(self.height * width, -1, dtype=np.int64)
        occupant[here_id[active]] = index[active]
        for _ in range(len(want) + 1):
            want_id = want[:, 0] * width + want[:, 1]
            movers = active & (want_id != here_id)
            stay = np.zeros(len(want), dtype=bool)
            # edge conflicts: i moves into j's cell while j moves into i's
            j = occupant[want_id]
            swap = movers & (j >= 0)
            swap[swap] = want_id[j[swap]] == here_id[swap]
            stay |= swap
            # vertex conflicts: more than one active agent wants a cell
            cells = want_id[active]
            counts = np.bincount(cells, minlength=self.height * width)
            contested = active & (counts[want_id] > 1) & movers
            if priority and contested.any():
                # the cell's lowest-index mover keeps it unless someone stays there
                first = np.full(self.height * width, len(want), dtype=np.int64)
                np.minimum.at(first, want_id[contested], index[contested])
                holder = occupant[want_id]
                holder_stays = (holder >= 0) & (want_id[np.maximum(holder, 0)] == here_id[
                    np.maximum(holder, 0)])  # fmt: skip
                contested &= (first[want_id] != index) | holder_stays
            stay |= contested
            if not stay.any():
                return want
            want = want.copy()
            want[stay] = here[stay]
        return want

    # -- observations ----------------------------------------------------------------------------

    def observe(self) -> np.ndarray:
        """(agents, 3, 2r+1, 2r+1) float32: obstacles, other agents, goal (module's text).
        Finished agents' observations are zeros."""
        r = self.config.obs_radius
        k = 2 * r + 1
        n = self.config.agents
        rows, cols = self.positions[:, 0], self.positions[:, 1]
        out = np.zeros((n, 3, k, k), dtype=np.float32)
        out[:, 0] = self._windows[rows, cols]
        live = self.active
        cells = (rows[live] + r) * self._padded.shape[1] + cols[live] + r
        occupied = self._occupied
        occupied.ravel()[:] = np.bincount(cells, minlength=occupied.size)
        out[:, 1] = self._windows_of(occupied)[rows, cols]
        out[:, 1, r, r] -= live  # (not itself)
        np.minimum(out[:, 1], 1.0, out=out[:, 1])
        rel = np.clip(self.goals - self.positions, -r, r) + r
        out[np.arange(n), 2, rel[:, 0], rel[:, 1]] = 1.0
        out[~live] = 0.0
        return out

    def _windows_of(self, padded: np.ndarray) -> np.ndarray:
        k = 2 * self.config.obs_radius + 1
        return np.lib.stride_tricks.sliding_window_view(padded, (k, k))

    def render(self, scale: int = 4) -> np.ndarray:
        """The map from above as an RGB array (H*scale, W*scale, 3) uint8: obstacles dark,
        agents blue, their goals green."""
        image = np.full((self.height, self.width, 3), 235, dtype=np.uint8)
        image[self.blocked] = (60, 60, 60)
        live = self.active
        image[self.goals[live, 0], self.goals[live, 1]] = (40, 170, 60)
        image[self.positions[live, 0], self.positions[live, 1]] = (40, 90, 220)
        return np.kron(image, np.ones((scale, scale, 1), dtype=np.uint8))
