"""`FleetTask`: a simulation's robots learning to drive on its site, with their real
kinematics, as arrays (the continuous task).

Each robot gets a lidar of its own (`beams` beams in a full turn, scanning every step). An
action is (forward speed m/s, turn rate rad/s) per robot, clipped to its limits and held for
one step (a differential robot's sideways speed is always 0). An observation is, per robot,
the lidar's ranges divided by `range_max` (nothing seen: 1), then its goal in its own frame
(forward, left, metres / `range_max`), then its speed and turn rate: (robots, beams + 4)
float32. Goals are nodes of the site's graph on the robot's floor; lifelong, a robot within
`goal_radius` of its goal gets a new one. Collisions are the simulator's own: a robot
collides in a step when one of its contacts begins in that step's collision check.
Rewards are `reward(state)`: by default the metres gained toward the goal, 1 on reaching it,
-1 on colliding (`progress_reward`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.collision.pairs import key_handles
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.geometry.quat import yaw_of


@dataclass
class FleetState:
    """What a reward function sees after a step, (robots,) arrays but positions (robots, 2)."""

    positions: np.ndarray
    goals: np.ndarray
    distance: np.ndarray  # to the goal, m, after the step
    progress: np.ndarray  # m gained toward the goal in the step
    reached: np.ndarray  # bool
    collided: np.ndarray  # bool: a contact began
    step: int = 0


def progress_reward(state: FleetState) -> np.ndarray:
    """Metres gained toward the goal, +1 for reaching it, -1 for a collision."""
    reward: np.ndarray = (
        state.progress + state.reached.astype(float) - state.collided.astype(float)
    ).astype(np.float32)
    return reward


@dataclass(frozen=True)
class FleetTaskConfig:
    """The continuous task.

    Attributes:
        beams: the lidar's beams (a full turn).
        range_max: the lidar's range, m (and the scale of goal distances).
        goal_radius: how near a goal counts as reaching it, m.
        max_steps: steps in an episode (then every robot is truncated).
        lifelong: a new goal on reaching one (False: the robot is done there and stands).
        reward: the reward function of a step's `FleetState`.
    """

    beams: int = 32
    range_max: float = 8.0
    goal_radius: float = 0.5
    max_steps: int = 600
    lifelong: bool = True
    reward: Callable[[FleetState], np.ndarray] = field(default=progress_reward)

    def __post_init__(self) -> None:
        if not (isinstance(self.beams, int) and self.beams >= 1):
            raise ConfigError(f"FleetTaskConfig: beams must be >= 1, got {self.beams!r}")
        for name in ("range_max", "goal_radius"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"FleetTaskConfig: {name} must be > 0, got {value!r}")


class FleetTask:
    """`robots` of `sim` (on its site) as learning agents (see the module's text):
    `reset(seed)`, `step(actions)`."""

    def __init__(self, sim: Any, robots: list[Any], config: FleetTaskConfig | None = None) -> None:
        if sim.site is None:
            raise ConfigError("FleetTask needs a site: its graph's nodes are the goals")
        if not robots:
            raise ConfigError("FleetTask needs at least one robot")
        self.sim, self.robots, self.config = sim, list(robots), config or FleetTaskConfig()
        c = self.config
        self.dt = float(sim.params.timestep)
        self.lidars = [
            r.add_lidar(beams=c.beams, rate=1.0 / self.dt, range_max=c.range_max, frame="rl_lidar")
            for r in self.robots
        ]
        self._ids = np.array([lidar.id for lidar in self.lidars], dtype=np.int64)
        self._slots = np.empty(0, dtype=np.int64)
        self._handles = np.array([r.handle for r in self.robots], dtype=np.int64)
        self._motion = np.array([r.motion_handle for r in self.robots], dtype=np.int64)
        self._index = np.full(int(self._handles.max()) + 1, -1, dtype=np.int64)
        self._index[self._handles] = np.arange(len(self.robots))
        graph = sim.site.graph
        self._nodes = graph.xy
        level = sim.site.level_at(self.robots[0].get_pose().z)
        self._on_floor = np.flatnonzero(graph.level == graph.level_names.index(level))
        if len(self._on_floor) <= len(self.robots):
            raise ConfigError(
                f"FleetTask: {len(self.robots)} robots need more nodes on their floor than "
                f"the site's {len(self._on_floor)}"
            )
        agents = sim.world.motion.agents
        rows = agents.rows(self._motion)
        self.max_speed = agents["max_v"][rows].copy()
        self.max_turn = agents["max_w"][rows].copy()
        self.rng = np.random.default_rng(0)
        self.goals = np.zeros((len(self.robots), 2))
        self.done = np.zeros(len(self.robots), dtype=bool)  # (one-shot: reached its goal)
        self.steps = 0
        self._owned = False
        self.built: Any = None  # (the scenario built, when made by `from_scenario`)

    @classmethod
    def from_scenario(
        cls,
        scenario: str,
        overrides: Sequence[str] = (),
        config: FleetTaskConfig | None = None,
    ) -> FleetTask:
        """A scenario (a file or a bundled name, with `--set`-style overrides) built without
        what would drive its robots (the fleet manager, motion plugins, start actions), its
        robots the learners. The task owns the simulation: `close()` it (or use `with`)."""
        from fleetsim.scenario import build, load_scenario
        from fleetsim.scenario.drivers import without_drivers

        loaded = load_scenario(scenario, list(overrides))
        without_drivers(loaded.scenario)
        built = build(loaded)
        try:
            task = cls(built.sim, built.scene.robots, config)
        except BaseException:
            built.sim.close()
            raise
        task._owned, task.built = True, built
        return task

    def close(self) -> None:
        """Close the simulation if the task made it (`from_scenario`)."""
        if self._owned:
            self.sim.close()

    def __enter__(self) -> FleetTask:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- episodes --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Robots at distinct nodes of their floor, facing anywhere, at rest, each with a goal
        node; one step at rest for a first scan; returns the observations."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = len(self.robots)
        starts = self.rng.choice(self._on_floor, size=n, replace=False)
        yaws = self.rng.uniform(-math.pi, math.pi, size=n)
        for robot, node, yaw in zip(self.robots, starts.tolist(), yaws.tolist(), strict=True):
            x, y = self._nodes[node]
            robot.clear_actions()
            robot.stop()
            robot.set_pose(Pose.from_yaw(float(x), float(y), robot.get_pose().z, yaw))
        self.goals = self._new_goals(self._nodes[starts])
        self.steps = 0
        self.done = np.zeros(n, dtype=bool)
        self._command(np.zeros((n, 2)))
        self.sim.step_once()
        self._distance = self._to_goal()[0]
        return self.observe()

    def _new_goals(self, positions: np.ndarray) -> np.ndarray:
        picks = self.rng.choice(self._on_floor, size=len(positions))
        goals: np.ndarray = self._nodes[picks]
        near = np.linalg.norm(goals - positions, axis=1) <= self.config.goal_radius
        if near.any():  # (a goal where it stands: the next node of the floor instead)
            nxt = (np.searchsorted(self._on_floor, picks[near]) + 1) % len(self._on_floor)
            goals[near] = self._nodes[self._on_floor[nxt]]
        return goals

    # -- a step ----------------------------------------------------------------------------------

    def _command(self, actions: np.ndarray) -> None:
        speed = np.clip(actions[:, 0], -self.max_speed, self.max_speed)
        turn = np.clip(actions[:, 1], -self.max_turn, self.max_turn)
        linear = np.column_stack((speed, np.zeros(len(speed))))
        until = self.sim.sim_time + self.dt * 1.5  # (held for the step, then braking)
        self.sim.world.motion.set_velocities(self._motion, linear, turn, until)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, FleetState]:
        """Every robot's (speed, turn rate) -> observations, rewards, terminated, truncated,
        and the step's `FleetState`."""
        a = np.asarray(actions, dtype=np.float64)
        n = len(self.robots)
        if a.shape != (n, 2) or not np.isfinite(a).all():
            raise ConfigError(
                f"FleetTask.step: actions must be ({n}, 2) finite numbers (speed m/s, turn "
                f"rad/s), got shape {a.shape}"
            )
        self._command(np.where(self.done[:, None], 0.0, a))  # (done robots stand)
        self.sim.step_once()
        self.steps += 1
        distance, positions = self._to_goal()
        reached = distance <= self.config.goal_radius
        collided = np.zeros(n, dtype=bool)
        started = self.sim.collisions.started
        if len(started):
            for side in key_handles(started):
                side = side[side < len(self._index)]
                k = self._index[side]
                collided[k[k >= 0]] = True
        state = FleetState(positions, self.goals.copy(), distance, self._distance - distance,
                           reached, collided, self.steps)  # fmt: skip
        rewards = np.asarray(self.config.reward(state), dtype=np.float32)
        if self.config.lifelong:
            if reached.any():
                self.goals[reached] = self._new_goals(positions[reached])
                distance = self._to_goal()[0]
        else:
            self.done |= reached
        terminated = self.done.copy()
        self._distance = distance
        truncated = np.full(n, self.steps >= self.config.max_steps)
        return self.observe(), rewards, terminated, truncated, state

    def _to_goal(self) -> tuple[np.ndarray, np.ndarray]:
        bodies = self.sim.world.bodies
        positions = bodies["pos"][bodies.rows(self._handles)][:, :2]
        return np.linalg.norm(self.goals - positions, axis=1), positions

    # -- observations ----------------------------------------------------------------------------

    def observe(self) -> np.ndarray:
        """(robots, beams + 4) float32 (see the module's text)."""
        c = self.config
        group = self.sim.lidars.group_of(self.lidars[0].id)
        slots = self._slots
        if len(slots) != len(self.lidars) or not np.array_equal(group.ids[slots], self._ids):
            slots = self._slots = np.searchsorted(group.ids, self._ids)  # (ids ascend)
        ranges = group.ranges[slots] / np.float32(c.range_max)
        ranges[~np.isfinite(ranges)] = 1.0
        bodies, agents = self.sim.world.bodies, self.sim.world.motion.agents
        rows = bodies.rows(self._handles)
        pos, quat = bodies["pos"][rows], bodies["quat"][rows]
        yaw = yaw_of(quat)
        d = self.goals - pos[:, :2]
        cos, sin = np.cos(yaw), np.sin(yaw)
        ahead, left = cos * d[:, 0] + sin * d[:, 1], -sin * d[:, 0] + cos * d[:, 1]
        motion = agents.rows(self._motion)
        vel = agents["vel"][motion]
        speed = cos * vel[:, 0] + sin * vel[:, 1]
        extra = np.column_stack((ahead / c.range_max, left / c.range_max, speed,
                                 agents["yaw_rate"][motion]))  # fmt: skip
        return np.concatenate((ranges, extra.astype(np.float32)), axis=1)
