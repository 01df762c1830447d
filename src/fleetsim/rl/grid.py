"""`GridFleet`: robots moving cell to cell on a grid map, every agent at once as arrays (the
array API under the PettingZoo and Gymnasium environments).

Each step every agent takes one of five actions: 0 wait, 1 up (row - 1), 2 down, 3 left
(column - 1), 4 right, as POGEMA numbers them. With `actions="turns"` agents have a heading
(0 east, 1 south, 2 west, 3 north, as the League of Robot Runners numbers them) and take one of
its four: 0 forward, 1 turn clockwise, 2 turn counter-clockwise, 3 wait; a turn always
succeeds and takes the step. A move into an obstacle or off the map is a wait.
Conflicts follow `collisions`:

- `"block"` (the default; MAPF's rules): agents that would meet in a cell (a vertex conflict)
  or swap cells (an edge conflict) all stay where they were, and so, in turn, does anyone
  moving into a cell whose agent stays; an agent may follow another into the cell it leaves;
- `"block_both"` (POGEMA's `block_both`): no following: a move into a cell held at the start
  of the step is refused; moves into the same free cell all stay;
- `"priority"` (POGEMA's `priority`): agents move one after another by index, each into its
  cell if no one holds it then;
- `"soft"` (POGEMA's `soft`): no conflicts; agents may share cells.

Under the first three no two agents ever share a cell or swap (`fleetsim.rl.conflicts`).

Observations are POGEMA's, (agents, 3, 2r+1, 2r+1) float32 centred on each agent, equal to
its own for the same map and positions (the tests compare them): obstacles (the map inside one
ring of wall; beyond it nothing), agents (itself at the centre included), and the goal (its
cell when inside the window, else the window's border cell nearest it). With turns the window
is turned so that the agent faces up (what is ahead of it is above the centre). Lifelong: an
agent on its goal scores and is given a new one (a free cell it can reach); one-shot: it scores
once, finishes, and leaves the map (it blocks no one). With `stations` (pick-up and drop-off
cells) goals alternate, a warehouse's orders: a pick-up, then a drop-off, then a pick-up...
(one-shot: one order, finished at its drop-off). With `delays` (the League of Robot Runners'
execution delays) an agent now and then waits, whatever it was told, for a few steps.
Rewards are `reward(state)`: by default 1.0 on reaching a goal.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.memory import check_bytes
from fleetsim.rl import conflicts

MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)  # (row, column)
COLLISIONS = ("block", "block_both", "priority", "soft")
ACTIONS = ("moves", "turns")
BYTES_PER_CELL = 57  # measured: a 3,000 x 3,000 free map, its arrays and labels at their peak
AHEAD = np.array([4, 2, 3, 1], dtype=np.int64)  # a heading's move: east right, south down...
HEADING_OF_MOVE = np.array([-1, 3, 1, 2, 0], dtype=np.int64)  # a move's heading (wait: none)
FORWARD, CLOCKWISE, COUNTER, WAIT = 0, 1, 2, 3  # the turning actions (LoRR's)


@dataclass
class GridState:
    """What a reward function sees after a step, all (agents,) arrays but the map."""

    blocked: np.ndarray  # (H, W) bool
    positions: np.ndarray  # (N, 2) row, column
    goals: np.ndarray  # (N, 2) row, column: the goals they had this step
    reached: np.ndarray  # bool: on its goal after this step
    moved: np.ndarray  # bool: changed cell
    stopped: np.ndarray  # bool: asked to move, kept where it was (a wall or a conflict)
    active: np.ndarray  # bool: still on the map (one-shot: not finished before this step)
    step: int = 0
    headings: np.ndarray | None = None  # with turns: 0 east, 1 south, 2 west, 3 north
    delivered: np.ndarray | None = None  # with stations: bool, reached a drop-off
    held: np.ndarray | None = None  # with delays: bool, a delay held it (its action ignored)


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
        collisions: `"block"`, `"block_both"`, `"priority"` or `"soft"` (module's text).
        max_steps: steps in an episode (then every agent is truncated).
        reward: the reward function of a step's `GridState`.
        actions: `"moves"` (POGEMA's five) or `"turns"` (LoRR's four, with headings).
        delays: execution delays (`fleetsim.faults.DelayConfig`, the League of Robot Runners'
            model: a delayed agent waits whatever its action, for a drawn number of steps),
            drawn afresh each episode from its seed; None: none.
        observation: a function of the `GridFleet` returning every agent's observation,
            (agents, ...) (it may use `fleet.windows()`, `positions`, `goals`, `headings`);
            None: `windows()`, POGEMA's.
    """

    agents: int = 64
    obs_radius: int = 5
    lifelong: bool = True
    collisions: Literal["block", "block_both", "priority", "soft"] = "block"
    max_steps: int = 256
    reward: Callable[[GridState], np.ndarray] = field(default=goal_reward)
    actions: Literal["moves", "turns"] = "moves"
    delays: DelayConfig | None = None
    observation: Callable[[GridFleet], np.ndarray] | None = None

    @property
    def n_actions(self) -> int:
        """How many actions an agent has: 5 (moves) or 4 (turns)."""
        return 5 if self.actions == "moves" else 4

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
        if self.actions not in ACTIONS:
            raise ConfigError(f"GridConfig: actions '{self.actions}': choose moves or turns")
        if not (isinstance(self.max_steps, int) and self.max_steps >= 1):
            raise ConfigError(f"GridConfig: max_steps must be >= 1, got {self.max_steps!r}")


def random_map(size: int, density: float = 0.2, seed: int = 0) -> np.ndarray:
    """A size x size map with about `density` of its cells blocked, at random (seeded)."""
    if not 0 <= density < 1:
        raise ConfigError(f"random_map: density is a fraction below 1, got {density!r}")
    if not (isinstance(size, int | np.integer) and size >= 1):
        raise ConfigError(f"random_map: size must be a whole number >= 1, got {size!r}")
    check_bytes(9.0 * size * size, f"random_map({size:,})", "use a smaller size")
    return np.random.default_rng(seed).random((size, size)) < density


def map_file(path: str, blocked: str = "") -> np.ndarray:
    """The blocked cells (H, W) of a MovingAI `.map` file (the League of Robot Runners' maps
    too); `blocked` adds characters that count as blocked. Errors name the file and line."""
    from fleetsim.site.movingai import load_movingai

    mask: np.ndarray = load_movingai(path, blocked=blocked).blocked
    return mask


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
    """Agents on a grid map as arrays (see the module's text): `reset(seed)`, `step(actions)`.

    `positions` and `goals` are (agents, 2) rows and columns (settable, for tests and
    scripted starts); inside, each is one cell number of the map padded by the observation
    radius, whose border is wall: a move off the map is a move into a wall. `stations`:
    (pick-up cells, drop-off cells), each (k, 2) rows and columns, for warehouse orders."""

    def __init__(
        self,
        blocked: np.ndarray,
        config: GridConfig | None = None,
        stations: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        grid = np.asarray(blocked, dtype=bool)
        if grid.ndim != 2 or grid.size < 2:
            raise ConfigError(f"GridFleet: the map must be a 2-D grid, got shape {grid.shape}")
        self.blocked, self.config = grid, config or GridConfig()
        self.height, self.width = grid.shape
        self._check_memory()
        self.labels = components(grid)
        sizes = np.bincount(self.labels[self.labels >= 0])
        self._component = int(np.argmax(sizes)) if len(sizes) else -1
        room = int(sizes.max()) if len(sizes) else 0
        if room < self.config.agents + 1:
            raise ConfigError(
                f"GridFleet: {self.config.agents} agents need as many free connected cells and "
                f"one more; the map's largest connected area has {room}"
            )
        r = self.config.obs_radius
        k = 2 * r + 1
        self._padded = np.pad(grid, r, constant_values=True)
        self._pw = self._padded.shape[1]  # (the padded map's width)
        self._wall = self._padded.ravel()
        rows, cols = np.nonzero(self.labels == self._component)
        self._cells = (rows + r) * self._pw + cols + r  # the largest area's cells, padded ids
        self._steps = np.array([0, -self._pw, self._pw, -1, 1], dtype=np.int64)
        # what observations show: the map inside one ring of wall, nothing beyond (POGEMA's)
        walls = np.zeros(self._padded.shape, dtype=np.float32)
        walls[r - 1 : r + self.height + 1, r - 1 : r + self.width + 1] = 1.0
        walls[r : r + self.height, r : r + self.width] = grid
        self._walls = np.lib.stride_tricks.sliding_window_view(walls, (k, k))
        self._occupied = np.zeros_like(walls)
        self._crowd = np.lib.stride_tricks.sliding_window_view(self._occupied, (k, k))
        self._count = np.zeros(self._padded.size, dtype=np.int64)
        self._first = np.zeros(self._padded.size, dtype=np.int64)
        self._occupant = np.full(self._padded.size, -1, dtype=np.int64)
        self.rng = np.random.default_rng(0)
        n = self.config.agents
        self._at = np.zeros(n, dtype=np.int64)
        self._goal = np.zeros(n, dtype=np.int64)
        self._index = np.arange(n)
        self.active = np.ones(n, dtype=bool)
        self.headings = np.zeros(n, dtype=np.int64)  # (with turns)
        self.carrying = np.zeros(n, dtype=bool)  # (with stations: on the way to a drop-off)
        self._stations = None if stations is None else self._station_cells(stations)
        self._delays: DelayGenerator | None = None
        self.steps = 0

    def _check_memory(self) -> None:
        """Refuse a map and observation radius whose arrays (about 50 bytes a cell of the map
        padded by the radius, and a step's observations, two float32 windows an agent) would
        not fit in this machine's memory, before making them."""
        c = self.config
        k = 2 * c.obs_radius + 1
        padded = (self.height + 2 * c.obs_radius) * (self.width + 2 * c.obs_radius)
        need = BYTES_PER_CELL * padded + 8.0 * c.agents * k * k
        what = (f"GridFleet: a {self.height:,} x {self.width:,} map, obs_radius {c.obs_radius:,} "
                f"and {c.agents:,} agents")  # fmt: skip
        check_bytes(need, what, "use a smaller map, radius or fleet")

    def _station_cells(self, stations: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
        """Pick-ups and drop-offs as padded cell ids, checked: free cells of the agents' area."""
        found = []
        for what, cells in zip(("pick-up", "drop-off"), stations, strict=True):
            rc = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
            if not len(rc):
                raise ConfigError(f"GridFleet: stations need at least one {what} cell")
            outside = (rc < 0).any(1) | (rc[:, 0] >= self.height) | (rc[:, 1] >= self.width)
            bad = outside.copy()
            bad[~outside] = self.labels[rc[~outside, 0], rc[~outside, 1]] != self._component
            if bad.any():
                r, c = rc[np.argmax(bad)].tolist()
                raise ConfigError(
                    f"GridFleet: {what} cell (row {r}, column {c}) is not a free cell of the "
                    "map's largest connected area, where the agents are"
                )
            found.append(self._ids(rc))
        return tuple(found)

    # -- where agents are ------------------------------------------------------------------------

    def _rows_cols(self, ids: np.ndarray) -> np.ndarray:
        r = self.config.obs_radius
        return np.stack(np.divmod(ids, self._pw), axis=1) - r

    def _ids(self, rows_cols: np.ndarray) -> np.ndarray:
        rc = np.asarray(rows_cols, dtype=np.int64).reshape(-1, 2) + self.config.obs_radius
        ids: np.ndarray = rc[:, 0] * self._pw + rc[:, 1]
        return ids

    @property
    def positions(self) -> np.ndarray:
        """(agents, 2) each agent's row and column."""
        return self._rows_cols(self._at)

    @positions.setter
    def positions(self, value: np.ndarray) -> None:
        self._at = self._ids(value)

    @property
    def goals(self) -> np.ndarray:
        """(agents, 2) each agent's goal, row and column."""
        return self._rows_cols(self._goal)

    @goals.setter
    def goals(self, value: np.ndarray) -> None:
        self._goal = self._ids(value)

    # -- episodes --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Agents on distinct free cells of the map's largest connected area, each with a goal
        there; returns the observations. The same seed gives the same episode."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.config.agents
        self._at = self.rng.choice(self._cells, size=n, replace=False)
        if self.config.actions == "turns":
            self.headings = self.rng.integers(0, 4, size=n)
        self.carrying = np.zeros(n, dtype=bool)
        self._goal = self._new_goals(self._at, self.carrying)
        delays = self.config.delays
        if delays is not None:  # (this episode's own draws)
            seeded = dataclasses.replace(delays, seed=int(self.rng.integers(2**31)))
            self._delays = DelayGenerator(seeded, n)
        self.active = np.ones(n, dtype=bool)
        self.steps = 0
        return self.observe()

    def _new_goals(self, at: np.ndarray, carrying: np.ndarray) -> np.ndarray:
        """A goal for each agent at `at`: a random cell of the same area, not its own; with
        stations a drop-off for those `carrying`, else a pick-up (its own cell when it is the
        only one: the order is done at once)."""
        if self._stations is not None:
            pickups, dropoffs = self._stations
            goals = np.empty(len(at), dtype=np.int64)
            for cells, who in ((dropoffs, carrying), (pickups, ~carrying)):
                picks = self.rng.integers(0, len(cells), size=int(who.sum()))
                same = cells[picks] == at[who]
                picks[same] = (picks[same] + 1) % len(cells)
                goals[who] = cells[picks]
            return goals
        cells = self._cells
        picks = self.rng.integers(0, len(cells), size=len(at))
        same = cells[picks] == at
        picks[same] = (picks[same] + 1) % len(cells)
        chosen: np.ndarray = cells[picks]
        return chosen

    # -- a step ----------------------------------------------------------------------------------

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, GridState]:
        """Every agent's action (agents,) ints (0-4; with turns 0-3) -> observations, rewards,
        terminated, truncated, and the step's `GridState`. Finished agents' actions are
        ignored."""
        a = np.asarray(actions)
        n = self.config.agents
        if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
            raise ConfigError(
                f"GridFleet.step: actions must be {n} integers, got {a.dtype} {a.shape}"
            )
        turns = self.config.actions == "turns"
        if n and (a.min() < 0 or a.max() >= self.config.n_actions):
            raise ConfigError(
                "GridFleet.step: actions are 0 forward, 1 turn clockwise, 2 turn "
                "counter-clockwise, 3 wait"
                if turns
                else "GridFleet.step: actions are 0 (wait), 1 up, 2 down, 3 left, 4 right"
            )
        was_active = self.active
        all_active = bool(was_active.all())
        held = None
        if self._delays is not None:
            self._delays.next_tick()
            held = self._delays.remaining > 0
            a = np.where(held, WAIT if turns else 0, a)
        if turns:
            spin = np.where(a == CLOCKWISE, 1, np.where(a == COUNTER, 3, 0))
            if not all_active:
                spin = np.where(was_active, spin, 0)
            self.headings = (self.headings + spin) % 4
            a = np.where(a == FORWARD, AHEAD[self.headings], 0)
        if not all_active:
            a = np.where(was_active, a, 0)
        here = self._at
        want = here + self._steps[a]
        walled = self._wall[want]
        if walled.any():
            want = np.where(walled, here, want)
        rule = self.config.collisions
        if rule == "block":
            want = conflicts.block(here, want, was_active, self._occupant, self._count)
        elif rule == "block_both":
            want = conflicts.block_both(here, want, was_active, self._occupant, self._count)
        elif rule == "priority":
            want = conflicts.priority(here, want, was_active, self._occupant, self._first)
        moved = want != here
        stopped = (a != 0) & ~moved
        self._at = want
        reached = want == self._goal
        if not all_active:
            stopped &= was_active
            reached &= was_active
        self.steps += 1
        state = GridState(self.blocked, self._rows_cols(want), self._rows_cols(self._goal),
                          reached, moved, stopped, was_active.copy(), self.steps)  # fmt: skip
        if turns:
            state.headings = self.headings.copy()
        state.held = held
        if self._stations is not None:
            state.delivered = reached & self.carrying
            self.carrying = self.carrying ^ reached
        rewards = np.asarray(self.config.reward(state), dtype=np.float32)
        again = reached  # (who gets a new goal)
        if not self.config.lifelong:  # one-shot: done on its goal (with stations: delivered)
            done = reached if state.delivered is None else state.delivered
            again = reached & ~done
        if again.any():
            self._goal = self._goal.copy()
            self._goal[again] = self._new_goals(want[again], self.carrying[again])
        if self.config.lifelong:
            terminated = np.zeros(n, dtype=bool)
        else:
            self.active = was_active & ~done
            terminated = ~self.active
        truncated = self.active & (self.steps >= self.config.max_steps)
        return self.observe(), rewards, terminated, truncated, state

    # -- observations ----------------------------------------------------------------------------

    def observe(self) -> np.ndarray:
        """Every agent's observation: `config.observation(fleet)` when given, else
        `windows()`."""
        if self.config.observation is not None:
            return np.asarray(self.config.observation(self))
        return self.windows()

    def windows(self) -> np.ndarray:
        """(agents, 3, 2r+1, 2r+1) float32: obstacles, agents, goal (the module's text).
        Finished agents' observations are zeros."""
        r = self.config.obs_radius
        k = 2 * r + 1
        n = self.config.agents
        rows, cols = np.divmod(self._at, self._pw)
        rows -= r
        cols -= r
        out = np.empty((n, 3, k, k), dtype=np.float32)
        out[:, 0] = self._walls[rows, cols]
        live = self.active
        all_live = bool(live.all())
        occupied = self._occupied.ravel()
        occupied[:] = np.bincount(self._at if all_live else self._at[live], minlength=occupied.size)
        out[:, 1] = self._crowd[rows, cols]
        if self.config.collisions == "soft":
            np.minimum(out[:, 1], 1.0, out=out[:, 1])
        goal_rows, goal_cols = np.divmod(self._goal, self._pw)
        out[:, 2] = 0.0
        gr = np.clip(goal_rows - rows - r, -r, r) + r
        gc = np.clip(goal_cols - cols - r, -r, r) + r
        out[self._index, 2, gr, gc] = 1.0
        if not all_live:
            out[~live] = 0.0
        if self.config.actions == "turns":  # (facing up: east turned a quarter anticlockwise)
            quarter = (self.headings + 1) % 4
            for k in (1, 2, 3):
                who = quarter == k
                if who.any():
                    out[who] = np.rot90(out[who], k, axes=(2, 3))
        return out

    def render(self, scale: int = 4) -> np.ndarray:
        """The map from above as an RGB array (H*scale, W*scale, 3) uint8: obstacles dark,
        agents blue, their goals green (pick-ups orange, drop-offs purple)."""
        image = np.full((self.height, self.width, 3), 235, dtype=np.uint8)
        image[self.blocked] = (60, 60, 60)
        live = self.active
        goals, positions = self.goals[live], self.positions[live]
        if self._stations is not None:
            for cells, colour in zip(self._stations, ((230, 150, 40), (150, 70, 190)), strict=True):
                rc = self._rows_cols(cells)
                image[rc[:, 0], rc[:, 1]] = colour
        image[goals[:, 0], goals[:, 1]] = (40, 170, 60)
        image[positions[:, 0], positions[:, 1]] = (40, 90, 220)
        return np.kron(image, np.ones((scale, scale, 1), dtype=np.uint8))
