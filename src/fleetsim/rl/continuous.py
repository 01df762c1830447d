"""`FleetTask`: a simulation's robots learning to drive on its site, with their real
kinematics, as arrays (the continuous task).

Each robot gets a lidar of its own (`beams` beams in a full turn, scanning every step). An
action is (forward speed m/s, turn rate rad/s) per robot, clipped to its limits and held for
one step (a differential robot's sideways speed is always 0); with `actions="waypoint"` it is
a point (ahead, left, m) in the robot's frame, at most `range_max` away, that the robot's own
controller drives to (within its speed and acceleration limits) until the next action. An
observation is, per robot,
the lidar's ranges divided by `range_max` (nothing seen: 1), then its goal in its own frame
(forward, left, metres / `range_max`), then its speed and turn rate, then (with `neighbours`
k > 0) its k nearest robots within `range_max`, nearest first, each (ahead, left) / `range_max`
and 1 (none: 0, 0, 0): (robots, beams + 4 + 3k) float32.
Goals are nodes of the site's graph on the robot's floor; lifelong, a robot within
`goal_radius` of its goal gets a new one. With `goals="stations"` they are a warehouse's
orders, from the site's pick-up nodes to its drop-off nodes (the fleet operations layer's
`pickup` and `dropoff` places): a pick-up, then a drop-off, then a pick-up... (one-shot: one
order). Collisions are the simulator's own: a robot collides in a step when one of its
contacts begins in that step's collision check. Faults (`faults`, a `FaultPlan`, or the
scenario's `faults:` section) happen as in any run: a stopped or broken-down robot stands
whatever it is told, a jump shifts where it believes it is (its goal's direction in the
observation), a door sticks; each episode draws them afresh from its seed. Rewards are
`reward(state)`: by default the metres gained toward the goal, 1 on reaching it, -1 on
colliding (`progress_reward`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fleetsim.collision.pairs import key_handles
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.faults import FaultInjector, FaultPlan
from fleetsim.geometry import Pose
from fleetsim.geometry.quat import yaw_of
from fleetsim.people.grid import pairs_within
from fleetsim.rl.top_view import TopView
from fleetsim.scenario.faults_plugin import FaultsPlugin

WAYPOINT_TOLERANCE_M = 0.01


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
    held: np.ndarray | None = None  # bool: a fault holds it (stopped or broken down)
    delivered: np.ndarray | None = None  # with stations: bool, reached a drop-off


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
        actions: `"velocity"` (speed, turn rate) or `"waypoint"` (ahead, left, m).
        goals: `"nodes"` (any node of the floor) or `"stations"` (pick-up, then drop-off).
        observation: a function of the task returning every robot's observation, (robots,
            ...) (it may use `task.ranges()`, `goal_in_frame()`, `lidar_observation()`, the
            simulation's arrays); None: `lidar_observation`.
        neighbours: how many nearest robots the default observation lists (0: none; the
            lidar sees them anyway).
    """

    beams: int = 32
    range_max: float = 8.0
    goal_radius: float = 0.5
    max_steps: int = 600
    lifelong: bool = True
    reward: Callable[[FleetState], np.ndarray] = field(default=progress_reward)
    actions: Literal["velocity", "waypoint"] = "velocity"
    goals: Literal["nodes", "stations"] = "nodes"
    observation: Callable[[FleetTask], np.ndarray] | None = None
    neighbours: int = 0

    def __post_init__(self) -> None:
        if not (isinstance(self.neighbours, int) and self.neighbours >= 0):
            raise ConfigError(f"FleetTaskConfig: neighbours must be >= 0, got {self.neighbours!r}")
        if self.actions not in ("velocity", "waypoint"):
            raise ConfigError(
                f"FleetTaskConfig: actions '{self.actions}': choose velocity or waypoint"
            )
        if self.goals not in ("nodes", "stations"):
            raise ConfigError(f"FleetTaskConfig: goals '{self.goals}': choose nodes or stations")
        if not (isinstance(self.max_steps, int) and self.max_steps >= 1):
            raise ConfigError(f"FleetTaskConfig: max_steps must be >= 1, got {self.max_steps!r}")
        if not (isinstance(self.beams, int) and self.beams >= 1):
            raise ConfigError(f"FleetTaskConfig: beams must be >= 1, got {self.beams!r}")
        for name in ("range_max", "goal_radius"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"FleetTaskConfig: {name} must be > 0, got {value!r}")


class FleetTask:
    """`robots` of `sim` (on its site) as learning agents (see the module's text):
    `reset(seed)`, `step(actions)`."""

    def __init__(
        self,
        sim: Any,
        robots: list[Any],
        config: FleetTaskConfig | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
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
        self.level = sim.site.level_at(self.robots[0].get_pose().z)
        on = graph.level == graph.level_names.index(self.level)
        self._on_floor = np.flatnonzero(on)
        if len(self._on_floor) <= len(self.robots):
            raise ConfigError(
                f"FleetTask: {len(self.robots)} robots need more nodes on their floor than "
                f"the site's {len(self._on_floor)}"
            )
        self._stations: tuple[np.ndarray, np.ndarray] | None = None
        if c.goals == "stations":
            found = [np.flatnonzero(graph.properties[kind] & on) for kind in ("pickup", "dropoff")]
            if not (len(found[0]) and len(found[1])):
                raise ConfigError(
                    f"FleetTask: goals 'stations' need pick-up and drop-off nodes on floor "
                    f"{self.level}; the site has {len(found[0])} and {len(found[1])} (give "
                    "nodes the properties pickup and dropoff)"
                )
            self._stations = (found[0], found[1])
        self.carrying = np.zeros(len(self.robots), dtype=bool)
        self.faults = None
        if faults is not None and not faults.empty:
            self.faults = FaultInjector(sim, self.robots, faults).attach()
        self._view: TopView | None = None
        agents = sim.world.motion.agents
        rows = agents.rows(self._motion)
        self.max_speed = agents["max_v"][rows].copy()
        self.max_turn = agents["max_w"][rows].copy()
        self.rng = np.random.default_rng(0)
        self.goals = np.zeros((len(self.robots), 2))
        self.done = np.zeros(len(self.robots), dtype=bool)  # (one-shot: reached its goal)
        self.steps = 0
        self._distance = np.empty(0)  # (each robot's distance to its goal: set by `reset`)
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
        task.faults = next((p.injector for p in built.plugins if isinstance(p, FaultsPlugin)), None)
        return task

    @property
    def faults(self) -> FaultInjector | None:
        """The faults that act on the robots (None: none)."""
        return self._faults

    @faults.setter
    def faults(self, injector: FaultInjector | None) -> None:
        self._faults = injector
        self._reports = (  # (each robot's row of the injector's reported offsets)
            np.array([injector.index[r.name] for r in self.robots], dtype=np.int64)
            if injector is not None
            else np.empty(0, dtype=np.int64)
        )

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
        if self.faults is not None:  # (first: what the faults held is let go)
            self.faults.restart(int(self.rng.integers(2**31)))
        n = len(self.robots)
        starts = self.rng.choice(self._on_floor, size=n, replace=False)
        yaws = self.rng.uniform(-math.pi, math.pi, size=n)
        for robot, node, yaw in zip(self.robots, starts.tolist(), yaws.tolist(), strict=True):
            x, y = self._nodes[node]
            robot.clear_actions()
            robot.stop()
            robot.set_pose(Pose.from_yaw(float(x), float(y), robot.get_pose().z, yaw))
        self.carrying = np.zeros(n, dtype=bool)
        self.goals = self._new_goals(self._nodes[starts], self.carrying)
        self.steps = 0
        self.done = np.zeros(n, dtype=bool)
        self._command(np.zeros((n, 2)))
        self.sim.step_once()
        self._distance = self._to_goal()[0]
        return self.observe()

    def _new_goals(self, positions: np.ndarray, carrying: np.ndarray) -> np.ndarray:
        if self._stations is None:
            return self._pick(self._on_floor, positions)
        goals = np.empty((len(positions), 2))
        pickups, dropoffs = self._stations
        for nodes, who in ((dropoffs, carrying), (pickups, ~carrying)):
            if who.any():
                goals[who] = self._pick(nodes, positions[who])
        return goals

    def _pick(self, nodes: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """One of `nodes` (ascending) for each position, at random; where it is within reach
        already, the next of them (when there is another)."""
        picks = self.rng.choice(nodes, size=len(positions))
        goals: np.ndarray = self._nodes[picks]
        near = np.linalg.norm(goals - positions, axis=1) <= self.config.goal_radius
        if near.any() and len(nodes) > 1:
            nxt = (np.searchsorted(nodes, picks[near]) + 1) % len(nodes)
            goals[near] = self._nodes[nodes[nxt]]
        return goals

    # -- a step ----------------------------------------------------------------------------------

    def _command(self, actions: np.ndarray) -> None:
        if self.config.actions == "waypoint":
            self._drive_to(actions)
            return
        speed = np.clip(actions[:, 0], -self.max_speed, self.max_speed)
        turn = np.clip(actions[:, 1], -self.max_turn, self.max_turn)
        linear = np.column_stack((speed, np.zeros(len(speed))))
        until = self.sim.sim_time + self.dt * 1.5  # (held for the step, then braking)
        self.sim.world.motion.set_velocities(self._motion, linear, turn, until)

    def _drive_to(self, actions: np.ndarray) -> None:
        """Each robot's own controller drives it to its point (ahead, left) at most
        `range_max` away (0, 0: it stops where it is)."""
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        pos, yaw = bodies["pos"][rows], yaw_of(bodies["quat"][rows])
        length = np.hypot(actions[:, 0], actions[:, 1])
        shrink = np.minimum(1.0, self.config.range_max / np.maximum(length, 1e-12))
        ahead, left = actions[:, 0] * shrink, actions[:, 1] * shrink
        cos, sin = np.cos(yaw), np.sin(yaw)
        targets = pos.copy()
        targets[:, 0] += cos * ahead - sin * left
        targets[:, 1] += sin * ahead + cos * left
        self.sim.world.motion.set_goals(self._motion, targets, WAYPOINT_TOLERANCE_M)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, FleetState]:
        """Every robot's action ((speed, turn rate), or a waypoint (ahead, left)) ->
        observations, rewards, terminated, truncated, and the step's `FleetState`."""
        n = len(self.robots)
        if len(self._distance) != n:
            raise FleetSimError("FleetTask.step: no episode yet: call reset(seed) first")
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (n, 2) or not np.isfinite(a).all():
            what = (
                "ahead m, left m" if self.config.actions == "waypoint" else "speed m/s, turn rad/s"
            )
            got = f"shape {a.shape}" if a.shape != (n, 2) else "NaN or infinite values"
            raise ConfigError(
                f"FleetTask.step: actions must be ({n}, 2) finite numbers ({what}), got {got}"
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
                           reached, collided, self.steps, self.held())  # fmt: skip
        done = reached
        if self._stations is not None:
            state.delivered = reached & self.carrying & ~self.done
            self.carrying = self.carrying ^ (reached & ~self.done)
            done = state.delivered
        rewards = np.asarray(self.config.reward(state), dtype=np.float32)
        again = reached & ~self.done if self.config.lifelong else reached & ~done & ~self.done
        if again.any():
            self.goals[again] = self._new_goals(positions[again], self.carrying[again])
            distance = self._to_goal()[0]
        if not self.config.lifelong:
            self.done |= done
        terminated = self.done.copy()
        self._distance = distance
        truncated = np.full(n, self.steps >= self.config.max_steps)
        return self.observe(), rewards, terminated, truncated, state

    def action_high(self) -> np.ndarray:
        """(robots, 2) float32: the largest action each robot takes (the smallest is its
        negative): (speed m/s, turn rate rad/s), or with waypoints (range_max, range_max)."""
        if self.config.actions == "waypoint":
            return np.full((len(self.robots), 2), self.config.range_max, dtype=np.float32)
        return np.column_stack((self.max_speed, self.max_turn)).astype(np.float32)

    def scripted(self) -> np.ndarray:
        """Actions that head for each robot's goal as it believes it is (no care for others):
        velocity, turn toward it and drive at 1 m/s (in the robot's limit) when facing it
        within 0.5 rad; waypoint, the goal itself (cut to range_max)."""
        toward = self.goal_in_frame()
        if self.config.actions == "waypoint":
            return toward
        angle = np.arctan2(toward[:, 1], toward[:, 0])
        return np.column_stack((np.where(np.abs(angle) < 0.5, 1.0, 0.0), 2.0 * angle))

    def held(self) -> np.ndarray:
        """(robots,) bool: held by a fault (stopped, broken down, delayed) now."""
        agents = self.sim.world.motion.agents
        held: np.ndarray = agents["fault_scale"][agents.rows(self._motion)] == 0.0
        return held

    def _to_goal(self) -> tuple[np.ndarray, np.ndarray]:
        bodies = self.sim.world.bodies
        positions = bodies["pos"][bodies.rows(self._handles)][:, :2]
        return np.linalg.norm(self.goals - positions, axis=1), positions

    # -- observations ----------------------------------------------------------------------------

    def observe(self) -> np.ndarray:
        """Every robot's observation: `config.observation(task)` when given, else
        `lidar_observation()`."""
        if self.config.observation is not None:
            return np.asarray(self.config.observation(self))
        return self.lidar_observation()

    def lidar_observation(self) -> np.ndarray:
        """(robots, beams + 4 + 3 neighbours) float32 (see the module's text)."""
        c = self.config
        ranges = self.ranges() / np.float32(c.range_max)
        ranges[~np.isfinite(ranges)] = 1.0
        agents = self.sim.world.motion.agents
        toward, cos, sin = self._goal_and_heading()
        motion = agents.rows(self._motion)
        vel = agents["vel"][motion]
        speed = cos * vel[:, 0] + sin * vel[:, 1]
        extra = np.column_stack((toward / c.range_max, speed, agents["yaw_rate"][motion]))
        parts = [ranges, extra.astype(np.float32)]
        if c.neighbours:
            near = self.neighbours(c.neighbours)
            parts.append(near.reshape(len(near), -1).astype(np.float32))
        return np.concatenate(parts, axis=1)

    def neighbours(self, k: int) -> np.ndarray:
        """(robots, k, 3): each robot's k nearest others within `range_max`, nearest first,
        as (ahead, left) / `range_max` in its frame and 1; 0, 0, 0 where there are fewer.
        The pairs come from a grid of cells as wide as `range_max` (`pairs_within`)."""
        reach, n = self.config.range_max, len(self.robots)
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        xy, yaw = bodies["pos"][rows, :2], yaw_of(bodies["quat"][rows])
        out = np.zeros((n, k, 3))
        live = np.flatnonzero(~self.done)
        if len(live) < 2 or k == 0:
            return out
        i, j = pairs_within(xy[live], reach)
        i, j = live[i], live[j]
        d = xy[j] - xy[i]
        dist = np.hypot(d[:, 0], d[:, 1])
        owner = np.concatenate((i, j))
        delta = np.concatenate((d, -d))
        dist = np.concatenate((dist, dist))
        order = np.lexsort((dist, owner))
        owner, delta = owner[order], delta[order]
        rank = np.arange(len(owner)) - np.searchsorted(owner, owner)
        keep = rank < k
        owner, rank, delta = owner[keep], rank[keep], delta[keep]
        cos, sin = np.cos(yaw[owner]), np.sin(yaw[owner])
        out[owner, rank, 0] = (cos * delta[:, 0] + sin * delta[:, 1]) / reach
        out[owner, rank, 1] = (-sin * delta[:, 0] + cos * delta[:, 1]) / reach
        out[owner, rank, 2] = 1.0
        return out

    def ranges(self) -> np.ndarray:
        """(robots, beams) float32: each robot's lidar scan of this step, m (inf: nothing;
        NaN before its first scan)."""
        group = self.sim.lidars.group_of(self.lidars[0].id)
        group.settle()  # (lidars added since the last scan: NaN until they scan)
        slots = self._slots
        if len(slots) != len(self.lidars) or not np.array_equal(group.ids[slots], self._ids):
            slots = self._slots = np.searchsorted(group.ids, self._ids)  # (ids ascend)
        ranges: np.ndarray = group.ranges[slots]
        return ranges

    def goal_in_frame(self) -> np.ndarray:
        """(robots, 2): each robot's goal (ahead, left, m) in its frame, as it believes it is
        (a jump fault shifts it)."""
        return self._goal_and_heading()[0]

    def _goal_and_heading(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`goal_in_frame`, and the cosines and sines of the robots' headings."""
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        yaw = yaw_of(bodies["quat"][rows])
        d = self.goals - bodies["pos"][rows, :2]
        if self._faults is not None:  # (a jump: where the robot believes it is)
            d -= self._faults.reported_offset[self._reports]
        cos, sin = np.cos(yaw), np.sin(yaw)
        toward = np.column_stack((cos * d[:, 0] + sin * d[:, 1], -sin * d[:, 0] + cos * d[:, 1]))
        return toward, cos, sin

    # -- pictures --------------------------------------------------------------------------------

    def render(self, width: int = 640, view: Literal["top", "pybullet"] = "top") -> np.ndarray:
        """The robots' floor from above, (height, width, 3) uint8 (`TopView`): obstacles,
        lanes, robots (red while a fault holds them) and their goals. `view="pybullet"`:
        PyBullet's own picture instead (`sim.capture_image`: the GUI's view, or headless its
        software renderer framing the fleet), width x 3/4 width."""
        if view == "pybullet":
            picture: np.ndarray = self.sim.capture_image(width, max(1, width * 3 // 4))
            return picture
        if view != "top":
            raise ConfigError(f"FleetTask.render: view '{view}': choose top or pybullet")
        if self._view is None or self._view.shape[1] != width:
            self._view = TopView(self.sim.site, self.level, width)
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        half = np.maximum(-bodies["aabb_local_min"][rows, :2], bodies["aabb_local_max"][rows, :2])
        live = ~self.done
        return self._view.draw(
            bodies["pos"][rows, :2][live],
            yaw_of(bodies["quat"][rows])[live],
            half.max(axis=1)[live],
            self.goals[live],
            self.held()[live],
        )
