"""The grid task as PettingZoo's Parallel API (`GridParallelEnv`: one agent per robot) and as
Gymnasium's single-agent API (`GridSingleEnv`: one robot among scripted others), both over
`GridFleet`'s arrays; the continuous task as PettingZoo's Parallel API (`FleetParallelEnv`)
and Gymnasium's (`FleetSingleEnv`), over `FleetTask`. Needs `pip install "fleetsim[rl]"`
(gymnasium, pettingzoo).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.rl.continuous import FleetTask
from fleetsim.rl.grid import HEADING_OF_MOVE, MOVES, GridConfig, GridFleet

try:
    import gymnasium
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError as exc:  # pragma: no cover (the extra is installed in the tests)
    raise FleetSimError(
        f'learning environments need gymnasium and pettingzoo: pip install "fleetsim[rl]" ({exc})'
    ) from None


def _spaces(fleet: GridFleet) -> tuple[Any, Any]:
    config = fleet.config
    actions = spaces.Discrete(config.n_actions)
    if config.observation is None:
        k = 2 * config.obs_radius + 1
        return spaces.Box(0.0, 1.0, (3, k, k), np.float32), actions
    return _box(fleet.reset(seed=0)), actions  # (an observation of your own: its shape)


def _box(observations: np.ndarray) -> Any:
    """A Box of any value with one agent's shape and dtype of `observations`."""
    one = np.asarray(observations)[0]
    if one.dtype.kind != "f":
        raise ConfigError(
            f"an observation function returns floating-point arrays, got {one.dtype} (cast "
            "with .astype(np.float32))"
        )
    return spaces.Box(-np.inf, np.inf, one.shape, one.dtype)


class GridParallelEnv(ParallelEnv):  # type: ignore[misc]
    """PettingZoo Parallel API over a grid map: agents `agent_0`... with POGEMA's observations
    (3, 2r+1, 2r+1) and five actions (see `fleetsim.rl.grid`). One-shot agents leave `agents`
    as they finish; every agent is truncated after `max_steps`. `render()` is an RGB array.
    `stations` (pick-ups, drop-offs) make the goals warehouse orders (`GridFleet`).
    `fleet` is the array API underneath."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "fleetsim_grid_v0",
        "render_modes": ["rgb_array"],
        "is_parallelizable": True,
    }

    def __init__(
        self,
        blocked: np.ndarray,
        config: GridConfig | None = None,
        render_mode: str | None = None,
        stations: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.fleet = GridFleet(blocked, config, stations)
        self.config = self.fleet.config
        self.render_mode = render_mode
        self.possible_agents = [f"agent_{k}" for k in range(self.config.agents)]
        self._number = {a: k for k, a in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self._all_live = False
        self._observation_space, self._action_space = _spaces(self.fleet)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self._observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self._action_space)

    def observation_space(self, agent: str) -> Any:
        """The same Box for every agent."""
        return self._observation_space

    def action_space(self, agent: str) -> Any:
        """Discrete(5) (moves) or Discrete(4) (turns) for every agent."""
        return self._action_space

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """A new episode; the same seed gives the same one."""
        if seed is not None:
            self._action_space.seed(seed)
        obs = self.fleet.reset(seed)
        self.agents = list(self.possible_agents)
        self._all_live = True  # (agents in order, every one there: the fast path)
        return dict(zip(self.agents, obs, strict=True)), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        """One step of every live agent (a missing agent waits)."""
        names = self.agents
        if self._all_live and len(actions) == len(names):
            chosen = np.fromiter(actions.values(), dtype=np.int64, count=len(actions))
            if list(actions) != names:  # (in another order, or a name that is not an agent's)
                for agent in actions:
                    _number(self._number, agent)
                chosen = np.array([actions.get(a, 0) for a in names], dtype=np.int64)
        else:
            chosen = np.zeros(self.config.agents, dtype=np.int64)
            for agent, action in actions.items():
                chosen[_number(self._number, agent)] = action
        obs, rewards, terminated, truncated, _ = self.fleet.step(chosen)
        if not self._all_live:  # (some have finished: only the live ones)
            live = [self._number[a] for a in names]
            obs, rewards, terminated, truncated = (
                obs[live],
                rewards[live],
                terminated[live],
                truncated[live],
            )
        done = terminated | truncated
        out: tuple[dict[str, Any], ...] = (
            dict(zip(names, obs, strict=True)),
            dict(zip(names, rewards.tolist(), strict=True)),
            dict(zip(names, terminated.tolist(), strict=True)),
            dict(zip(names, truncated.tolist(), strict=True)),
            {a: {} for a in names},
        )
        if done.any():
            self.agents = [a for a, d in zip(names, done.tolist(), strict=True) if not d]
            self._all_live = False
        return out

    def render(self) -> np.ndarray | None:
        """The map from above (RGB array) when `render_mode="rgb_array"`."""
        return self.fleet.render() if self.render_mode == "rgb_array" else None

    def state(self) -> np.ndarray:
        """The whole map as one image-like array (what a centralised critic sees)."""
        return self.fleet.render(scale=1)

    def close(self) -> None:
        """Nothing to free."""


class GridSingleEnv(gymnasium.Env):
    """Gymnasium API: agent 0 learns; the others are scripted (each step toward its goal along
    a row or column that is open, else a random move), so the learner meets traffic.
    `gymnasium.vector.SyncVectorEnv` / `AsyncVectorEnv` run many small worlds at once."""

    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012 (gymnasium's own declaration)

    def __init__(
        self,
        blocked: np.ndarray,
        config: GridConfig | None = None,
        render_mode: str | None = None,
        stations: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.fleet = GridFleet(blocked, config, stations)
        self.config = self.fleet.config
        self.render_mode = render_mode
        self.observation_space, self.action_space = _spaces(self.fleet)
        self._others = np.random.default_rng(0)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """A new episode; the same seed gives the same one."""
        super().reset(seed=seed)
        if seed is not None:
            self._others = np.random.default_rng(seed + 1)
        obs = self.fleet.reset(seed if seed is not None else int(self.np_random.integers(2**31)))
        return obs[0], {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Agent 0's action; the others' are scripted."""
        actions = self.scripted()
        actions[0] = int(action)
        obs, rewards, terminated, truncated, state = self.fleet.step(actions)
        return (
            obs[0],
            float(rewards[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            {"reached": bool(state.reached[0])},
        )

    def scripted(self) -> np.ndarray:
        """The others' actions: the move that closes the larger gap to the goal when that cell
        is free, else a random action."""
        f = self.fleet
        gap = f.goals - f.positions
        vertical = np.abs(gap[:, 0]) >= np.abs(gap[:, 1])
        toward = np.where(vertical, np.where(gap[:, 0] < 0, 1, 2), np.where(gap[:, 1] < 0, 3, 4))
        toward[np.all(gap == 0, axis=1)] = 0
        target = f.positions + MOVES[toward]
        inside = (target >= 0).all(1) & (target[:, 0] < f.height) & (target[:, 1] < f.width)
        ok = inside.copy()
        ok[inside] = ~f.blocked[target[inside, 0], target[inside, 1]]
        random = self._others.integers(0, 5, size=len(toward))
        moves = np.where(ok, toward, random).astype(np.int64)
        return moves if f.config.actions == "moves" else turns_toward(f.headings, moves)

    def render(self) -> np.ndarray | None:
        """The map from above (RGB array) when `render_mode="rgb_array"`."""
        return self.fleet.render() if self.render_mode == "rgb_array" else None


class FleetParallelEnv(ParallelEnv):  # type: ignore[misc]
    """PettingZoo Parallel API over a `FleetTask`: each robot an agent (its name), observations
    (beams + 4,) float32 (or those of the task's own observation function), actions in the
    robot's limits (speed m/s, turn rate rad/s; or a waypoint). Robots that finish (one-shot)
    leave `agents`; all are truncated after `max_steps`."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "fleetsim_fleet_v0",
        "render_modes": ["rgb_array", "pybullet"],
    }

    def __init__(self, task: FleetTask, render_mode: str | None = None) -> None:
        self.task, self.render_mode = task, render_mode
        self.possible_agents = [robot.name for robot in task.robots]
        self._number = {a: k for k, a in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self._observation = _box(task.observe())
        high = task.action_high()
        self._actions = {
            a: spaces.Box(-high[k], high[k]) for k, a in enumerate(self.possible_agents)
        }

    def observation_space(self, agent: str) -> Any:
        """The same Box for every robot."""
        return self._observation

    def action_space(self, agent: str) -> Any:
        """(speed, turn rate) within the robot's limits."""
        return self._actions[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """A new episode; the same seed gives the same one."""
        if seed is not None:
            for k, space in enumerate(self._actions.values()):
                space.seed(seed + k)
        obs = self.task.reset(seed)
        self.agents = list(self.possible_agents)
        return dict(zip(self.agents, obs, strict=True)), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        """One step of every robot (a missing or finished robot stands still)."""
        chosen = np.zeros((len(self.possible_agents), 2))
        for agent, action in actions.items():
            chosen[_number(self._number, agent)] = _pair(action, self.task, f"{agent}'s action")
        obs, rewards, terminated, truncated, _ = self.task.step(chosen)
        live = [self._number[a] for a in self.agents]
        names = self.agents
        out: tuple[dict[str, Any], ...] = (
            dict(zip(names, obs[live], strict=True)),
            dict(zip(names, rewards[live].tolist(), strict=True)),
            dict(zip(names, terminated[live].tolist(), strict=True)),
            dict(zip(names, truncated[live].tolist(), strict=True)),
            {a: {} for a in names},
        )
        done = (terminated | truncated)[live]
        self.agents = [a for a, d in zip(names, done.tolist(), strict=True) if not d]
        return out

    def render(self) -> np.ndarray | None:
        """The robots' floor from above (RGB array) when `render_mode="rgb_array"`; PyBullet's
        own picture when `"pybullet"`."""
        return _render(self.task, self.render_mode)

    def close(self) -> None:
        """The simulation is the caller's to close."""


class FleetSingleEnv(gymnasium.Env):
    """Gymnasium API over a `FleetTask`: its first robot learns; the others are scripted (each
    turns toward its goal and drives when facing it), so the learner meets traffic. Closing
    the environment closes the task (and the simulation, when the task owns it)."""

    metadata = {"render_modes": ["rgb_array", "pybullet"]}  # noqa: RUF012 (gymnasium's own)

    def __init__(self, task: FleetTask, render_mode: str | None = None) -> None:
        self.task, self.render_mode = task, render_mode
        self.observation_space = _box(task.observe())
        high = task.action_high()[0]
        self.action_space = spaces.Box(-high, high)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """A new episode; the same seed gives the same one."""
        super().reset(seed=seed)
        obs = self.task.reset(seed if seed is not None else int(self.np_random.integers(2**31)))
        return obs[0], {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The first robot's action; the others' are scripted (`FleetTask.scripted`)."""
        actions = self.task.scripted()
        actions[0] = _pair(action, self.task, "the action")
        obs, rewards, terminated, truncated, state = self.task.step(actions)
        info = {"reached": bool(state.reached[0]), "collided": bool(state.collided[0])}
        return obs[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]), info

    def render(self) -> np.ndarray | None:
        """The robots' floor from above (RGB array) when `render_mode="rgb_array"`; PyBullet's
        own picture when `"pybullet"`."""
        return _render(self.task, self.render_mode)

    def close(self) -> None:
        """Close the task."""
        self.task.close()


def _number(numbers: dict[str, int], agent: str) -> int:
    """The row of the agent named `agent`; a clear error for a name that is not one."""
    if agent not in numbers:
        raise ConfigError(f"step: no agent named {agent!r}; the agents are "
                          f"{', '.join(map(str, numbers))}")  # fmt: skip
    return numbers[agent]


def _pair(action: Any, task: FleetTask, what: str) -> np.ndarray:
    """A robot's action as 2 numbers (speed, turn rate; or ahead, left); a clear error for
    another shape (the task checks that they are finite)."""
    a = np.asarray(action, dtype=np.float64)
    if a.shape != (2,):
        kind = "ahead m, left m" if task.config.actions == "waypoint" else "speed m/s, turn rad/s"
        raise ConfigError(f"step: {what} must be 2 numbers ({kind}), got shape {a.shape}")
    return a


def _render(task: FleetTask, mode: str | None) -> np.ndarray | None:
    """A continuous task's picture in a wrapper's render mode (None for none)."""
    views = {"rgb_array": "top", "pybullet": "pybullet"}
    return task.render(view=views[mode]) if mode in views else None  # type: ignore[arg-type]


def turns_toward(headings: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The turning actions that carry out `moves` (POGEMA's 0-4) for agents facing `headings`:
    forward when facing the move's way, else a quarter turn toward it (clockwise for a half
    turn), wait for a wait."""
    want = HEADING_OF_MOVE[moves]
    quarter = (want - headings) % 4
    turns = np.where(quarter == 0, 0, np.where(quarter == 3, 2, 1))
    out: np.ndarray = np.where(moves == 0, 3, turns).astype(np.int64)
    return out
