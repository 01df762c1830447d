"""`Agent`: a robot loaded from URDF that drives to goals, follows paths and runs actions.

Its motion lives in the simulation's agent table and is advanced for the whole fleet at once;
this handle only sets goals and reads state.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.agents.fleet_control import FleetControl
from fleetsim.agents.guard import Guard
from fleetsim.agents.ik import InverseKinematics
from fleetsim.agents.ik_params import IKParams
from fleetsim.agents.joints import JointControl
from fleetsim.agents.params import AgentSpawnParams
from fleetsim.errors import ConfigError
from fleetsim.geometry import Path, Pose
from fleetsim.models import RobotProfile, model_sensors, resolve_urdf
from fleetsim.models.profile import profile_of_body
from fleetsim.objects import SimObject, World
from fleetsim.objects.deferred import Template, UrdfRecipe
from fleetsim.objects.sim_object import world_of
from fleetsim.objects.world import HasWorld
from fleetsim.sensors import lidar_params
from fleetsim.state import MotionMode

A = TypeVar("A", bound="Agent")

DEFAULT_TOLERANCE_M = 0.01


class ActionRunner(Protocol):
    """What agents need from the action system (installed on the world by the simulation)."""

    def add(self, agent: Agent, action: Any) -> None:
        """Queue an action for the agent."""

    def execute(self, agent: Agent, action: Any) -> None:
        """Run an action now, cancelling the current one."""

    def clear(self, agent: Agent) -> None:
        """Cancel the current action and empty the queue."""

    def current(self, agent: Agent) -> Any:
        """The running action, or None."""

    def queued(self, agent: Agent) -> list[Any]:
        """The actions waiting behind the current one."""

    def go_to(self, agent: Agent, node: str | int, tolerance: float) -> Any:
        """Queue a `GoTo` to `node` along the site's lanes."""


class AgentController:
    """Velocity commands for one agent: `agent.controller.set_cmd_vel(vx, vy, wz, timeout)`."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def set_cmd_vel(
        self, linear_x: float, linear_y: float = 0.0, angular_z: float = 0.0, timeout: float = 0.5
    ) -> None:
        """Drive at body-frame (linear_x, linear_y) m/s and angular_z rad/s for `timeout` s.

        Replaces any goal or path. Speeds are clipped to the agent's limits and change at most at
        its accelerations; after `timeout` simulated seconds the agent brakes to rest (send again
        to keep going, like a ROS cmd_vel stream). Differential agents cannot move sideways.
        """
        values = (linear_x, linear_y, angular_z, timeout)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values) or timeout <= 0:
            raise ConfigError(f"set_cmd_vel needs finite speeds and timeout > 0 s, got {values}")
        agent = self._agent
        if agent.motion_mode is MotionMode.DIFFERENTIAL and linear_y != 0.0:
            raise ConfigError(
                f"{agent.name} is differential-drive: it cannot move sideways (linear_y must be 0)"
            )
        world = agent.world
        world.motion.set_velocity(
            agent.motion_handle, linear_x, linear_y, angular_z, world.time + timeout
        )

    def stop(self) -> None:
        """Stop velocity control: the agent stops within its deceleration limits."""
        self._agent.stop()


class Agent(SimObject, JointControl, InverseKinematics, FleetControl, Guard):
    """A robot from a URDF (by catalogue name or path) with goal-based motion and an action queue.

    Create one with `Agent.from_urdf("mobile_robot", pose=..., sim_core=sim)` or
    `Agent.from_params(AgentSpawnParams(...), sim_core=sim)`.
    """

    def __init__(
        self,
        world: World,
        handle: int,
        params: AgentSpawnParams,
        urdf_path: str,
        motion: int | None = None,
        spawned_at: tuple[np.ndarray, int] | None = None,
    ) -> None:
        user_data = dict(params.user_data) if params.user_data else None
        super().__init__(world, handle, params.name, user_data)
        self._params = params
        self._spawned_at = spawned_at  # (poses (N, 7), index) of a batch sharing `params`
        self.urdf_path = urdf_path
        self.motion_mode = params.mode
        if motion is None:
            motion = (
                -1
                if params.use_fixed_base
                else world.motion.add(handle, params.mode, params.limits)
            )
        self._motion = motion
        if params.joint_tolerance is not None:
            self.joint_tolerance = params.joint_tolerance

    _default_name = "agent"
    _profile: RobotProfile | None = None
    _ik_params: IKParams | None = None

    @property
    def controller(self) -> AgentController:
        """Velocity commands: `agent.controller.set_cmd_vel(vx, vy, wz, timeout)`."""
        return AgentController(self)

    @property
    def ik_params(self) -> IKParams:
        """`IKParams` for `move_end_effector` (from the spawn params; change them here)."""
        if self._ik_params is None:
            self._ik_params = self._params.ik_params or IKParams()
        return self._ik_params

    @ik_params.setter
    def ik_params(self, value: IKParams) -> None:
        self._ik_params = value

    @property
    def spawn_params(self) -> AgentSpawnParams:
        """The parameters this agent was spawned with (its own `initial_pose`)."""
        if self._spawned_at is None:
            return self._params
        poses, i = self._spawned_at
        pose = Pose.unchecked(tuple(poses[i, :3].tolist()), tuple(poses[i, 3:].tolist()))
        return dataclasses.replace(self._params, initial_pose=pose)

    # -- creation -----------------------------------------------------------------------------

    @classmethod
    def from_urdf(
        cls: type[A],
        urdf_path: str,
        pose: Pose | None = None,
        sim_core: HasWorld | None = None,
        **params: Any,
    ) -> A:
        """Load a robot by model name or URDF path; `params` are `AgentSpawnParams` fields."""
        spawn = AgentSpawnParams(
            urdf_path=urdf_path, initial_pose=pose if pose is not None else Pose(), **params
        )
        return cls.from_params(spawn, sim_core=sim_core)

    @classmethod
    def from_params(  # type: ignore[override]
        cls: type[A], spawn_params: AgentSpawnParams, sim_core: HasWorld | None = None
    ) -> A:
        """Create the agent described by `spawn_params` in `sim_core`."""
        if not isinstance(spawn_params, AgentSpawnParams):
            raise ConfigError(
                f"Agent.from_params needs AgentSpawnParams, got {type(spawn_params).__name__}"
            )
        world = world_of(sim_core)
        recipe = _recipe(spawn_params)
        pose = spawn_params.initial_pose
        template = world.template_for(recipe)
        if template is not None:  # a row only, until PyBullet is needed (deferred.py)
            rows = np.array([(*pose.position, *pose.orientation)])
            deferred = cls._add_deferred(world, template, spawn_params, recipe, rows)
            return _with_model_sensors(deferred, spawn_params)[0]
        body = world.backend.load_urdf(
            recipe.path, pose.position, pose.orientation, spawn_params.use_fixed_base
        )
        try:
            mass = world.backend.prepare_agent_body(
                body, spawn_params.mass, kinematic=world.physics
            )
        except BaseException:
            world.backend.remove_body(body)
            raise
        agent: A = world.adopt_body(
            body,
            lambda h: cls(world, h, spawn_params, recipe.path),
            facts_key=recipe.path,
            mobile=not spawn_params.use_fixed_base,
            mass=mass,
            pickable=spawn_params.pickable,
            collision_mode=int(spawn_params.collision_mode),
            robot=True,
        )
        world.learn_template(recipe, agent.handle)
        return _with_model_sensors([agent], spawn_params)[0]

    @classmethod
    def from_params_at(  # type: ignore[override]
        cls: type[A],
        spawn_params: AgentSpawnParams,
        positions: ArrayLike,
        orientations: ArrayLike,
        sim_core: HasWorld | None = None,
    ) -> list[A]:
        """Copies of `spawn_params` at positions (N, 3) with orientations (4,) or (N, 4): a fleet
        at once, much faster than one `from_params` each. All or nothing."""
        if not isinstance(spawn_params, AgentSpawnParams):
            raise ConfigError(
                f"Agent.from_params_at needs AgentSpawnParams, got {type(spawn_params).__name__}"
            )
        world = world_of(sim_core)
        poses = spawn_poses(positions, orientations)
        recipe = _recipe(spawn_params)
        created: list[A] = []
        try:
            for i in range(len(poses)):
                template = world.template_for(recipe)
                if template is not None:  # the rest as rows only
                    rest = cls._add_deferred(world, template, spawn_params, recipe, poses, i)
                    created += _with_model_sensors(rest, spawn_params)
                    break
                pose = Pose.unchecked(tuple(poses[i, :3].tolist()), tuple(poses[i, 3:].tolist()))
                created.append(
                    cls.from_params(dataclasses.replace(spawn_params, initial_pose=pose), sim_core)
                )
        except BaseException:
            for agent in reversed(created):
                agent.remove()
            raise
        return created

    @classmethod
    def _add_deferred(
        cls: type[A],
        world: World,
        template: Template,
        params: AgentSpawnParams,
        recipe: UrdfRecipe,
        poses: np.ndarray,
        start: int = 0,
    ) -> list[A]:
        """Agents for poses[start:] (rows of x, y, z, qx, qy, qz, qw) with no PyBullet body."""

        def factory(handles: np.ndarray) -> list[A]:
            if params.use_fixed_base:
                motions = [-1] * len(handles)
            else:
                motions = world.motion.add_many(handles, params.mode, params.limits).tolist()
            try:
                return [
                    cls(world, h, params, recipe.path, motion=m, spawned_at=(poses, k))
                    for k, (h, m) in enumerate(zip(handles.tolist(), motions, strict=True), start)
                ]
            except BaseException:
                for m in motions[::-1]:
                    if m >= 0:
                        world.motion.remove(m)
                raise

        return world.add_deferred(
            template,
            poses[start:, :3],
            poses[start:, 3:],
            factory,
            pickable=params.pickable,
            collision_mode=int(params.collision_mode),
            robot=True,
        )

    # -- identity -----------------------------------------------------------------------------

    @property
    def drives(self) -> bool:
        """Whether the agent can drive (a mobile base, not a fixed-base arm)."""
        return self._motion >= 0

    @property
    def motion_handle(self) -> int:
        """Row handle in the agent table; fixed-base agents have none."""
        if self._motion < 0:
            raise ConfigError(f"{self.name} has a fixed base: it cannot drive")
        return self._motion

    @property
    def profile(self) -> RobotProfile:
        """What this robot is (type, joints, end effector); read once per model from PyBullet
        (robots that wait for their PyBullet body share their model's)."""
        if self._profile is None:
            known = self._world.profiles
            if self.urdf_path not in known:
                known[self.urdf_path] = profile_of_body(self._world.backend.client, self.object_id)
            self._profile = known[self.urdf_path]
        return self._profile

    # -- motion -------------------------------------------------------------------------------

    def set_goal(
        self, pose: Pose, tolerance: float = DEFAULT_TOLERANCE_M, align_orientation: bool = True
    ) -> None:
        """Drive to `pose`; with `align_orientation` end facing its yaw. Replaces any path.

        `is_goal_reached()` turns True within `tolerance` metres.
        """
        if not isinstance(pose, Pose):
            raise ConfigError(f"set_goal needs a Pose (e.g. Pose.from_xyz(3, 1)), got {pose!r}")
        _check_tolerance(tolerance)
        self._world.motion.set_goal(
            self.motion_handle, np.array(pose.position), pose.yaw, align_orientation, tolerance
        )

    set_goal_pose = set_goal

    def set_path(
        self,
        path: Path | Sequence[Pose],
        tolerance: float = DEFAULT_TOLERANCE_M,
        align_orientation: bool = True,
        speed_limits: Sequence[float] | None = None,
    ) -> None:
        """Visit every waypoint in order; the last one counts as the goal.

        The robot passes through the waypoints on the way at the speed its limits allow for
        the turn there (a differential robot stops and turns in place unless the path goes
        straight on). `speed_limits` (one per waypoint, m/s, inf for none) caps the leg that
        ends at each waypoint, as lane speed limits do.
        """
        waypoints = path.waypoints if isinstance(path, Path) else tuple(path)
        if not waypoints or not all(isinstance(w, Pose) for w in waypoints):
            raise ConfigError("set_path needs a Path or a non-empty sequence of Pose")
        _check_tolerance(tolerance)
        limits = None
        if speed_limits is not None:
            limits = np.asarray(speed_limits, dtype=np.float64)
            if limits.shape != (len(waypoints),) or np.any(~(limits > 0)):
                raise ConfigError(
                    f"speed_limits needs one value > 0 m/s per waypoint ({len(waypoints)}), "
                    f"got {speed_limits!r:.80}"
                )
        positions = np.array([w.position for w in waypoints])
        yaws = np.array([w.yaw for w in waypoints])
        self._world.motion.set_path(
            self.motion_handle, positions, yaws, align_orientation, tolerance, limits
        )

    def set_waypoints(
        self,
        positions: ArrayLike,
        yaws: ArrayLike | None = None,
        tolerance: float = DEFAULT_TOLERANCE_M,
        align_orientation: bool = False,
        speed_limits: ArrayLike | None = None,
        face: ArrayLike | None = None,
    ) -> None:
        """`set_path` from arrays: `positions` (K, 2) or (K, 3) metres (left out, z is the
        robot's height now: a planar path keeps it on the floor it is on, at any level),
        `yaws` (K,) radians (default: the current heading), `speed_limits` (K,) m/s for the leg
        ending at each waypoint (inf for none), `face` (K,) bool: turn to the waypoint's yaw
        on the way to it (omnidirectional robots holding a heading). No `Pose` per waypoint:
        for code that plans in arrays (the VDA 5050 vehicles, fleet managers)."""
        points = np.asarray(positions, dtype=np.float64)
        if points.ndim != 2 or points.shape[1] not in (2, 3) or not len(points):
            raise ConfigError(f"positions must be (K, 2) or (K, 3), got shape {points.shape}")
        if points.shape[1] == 2:
            z = self.get_pose().position[2]
            points = np.column_stack([points, np.full(len(points), z)])
        if yaws is None:
            yaw = np.full(len(points), self.get_pose().yaw)
        else:
            yaw = np.asarray(yaws, dtype=np.float64)
        limits = None if speed_limits is None else np.asarray(speed_limits, dtype=np.float64)
        if yaw.shape != (len(points),) or (limits is not None and limits.shape != yaw.shape):
            raise ConfigError(f"yaws and speed_limits need one value per waypoint ({len(points)})")
        if not (np.all(np.isfinite(points)) and np.all(np.isfinite(yaw))):
            raise ConfigError("waypoints and yaws must be finite")
        if limits is not None and np.any(~(limits > 0)):
            raise ConfigError("speed_limits must be > 0 m/s (inf for none)")
        facing = None if face is None else np.asarray(face, dtype=bool)
        if facing is not None and facing.shape != yaw.shape:
            raise ConfigError(f"face needs one flag per waypoint ({len(points)})")
        _check_tolerance(tolerance)
        self._world.motion.set_path(
            self.motion_handle, points, yaw, align_orientation, tolerance, limits, facing
        )

    def is_goal_reached(self) -> bool:
        """Whether the agent is within tolerance of its last goal (or path end)."""
        return self._motion >= 0 and self._world.motion.is_arrived(self._motion)

    @property
    def is_moving(self) -> bool:
        """Whether the agent has a goal, path or velocity command it has not finished."""
        return self._motion >= 0 and self._world.motion.is_moving(self._motion)

    def stop(self) -> None:
        """Stop at once and forget the goal, path or velocity command."""
        if self._motion >= 0:
            self._world.motion.stop(self._motion)

    def get_velocity(self) -> tuple[tuple[float, float, float], float]:
        """(linear velocity (x, y, z) in m/s in the world frame, yaw rate in rad/s)."""
        if self._motion < 0:
            return (0.0, 0.0, 0.0), 0.0
        agents = self._world.motion.agents
        row = agents.row(self._motion)
        vx, vy, vz = agents["vel"][row].tolist()
        return (vx, vy, vz), float(agents["yaw_rate"][row])

    @property
    def linear_velocity(self) -> tuple[float, float, float]:
        """Velocity (vx, vy, vz) in m/s, world frame."""
        return self.get_velocity()[0]

    @property
    def angular_velocity(self) -> float:
        """Yaw rate in rad/s."""
        return self.get_velocity()[1]

    def update(self, dt: float) -> None:
        """Advance only this agent's motion by `dt` (the simulation steps all agents at once)."""
        if self._motion >= 0:
            self._world.motion.step(dt, self._world.time, only=np.array([self._motion]))

    # -- actions ------------------------------------------------------------------------------

    def _runner(self) -> ActionRunner:
        # (the core installs an ActionSystem: the world's tick and the agents' queue in one)
        runner = cast("ActionRunner | None", self._world.actions)
        if runner is None:
            raise ConfigError(
                "actions need a MultiRobotSimulationCore (no action runner installed)"
            )
        return runner

    def add_action(self, action: Any) -> None:
        """Queue an action; it starts when the ones before it are done."""
        self._runner().add(self, action)

    def go_to(self, node: str | int, tolerance: float = 0.05) -> Any:
        """Queue a `GoTo` to a named place of the simulation's site; returns the action."""
        return self._runner().go_to(self, node, tolerance)

    def add_action_sequence(self, actions: Iterable[Any]) -> None:
        """Queue each of `actions` in order."""
        for action in actions:
            self.add_action(action)

    def execute_action(self, action: Any) -> None:
        """Cancel the current action and run `action` now; the queue continues after it."""
        self._runner().execute(self, action)

    def clear_actions(self) -> None:
        """Cancel the current action and drop the queue (the robot stops)."""
        self._runner().clear(self)

    def get_current_action(self) -> Any:
        """The running action, or None."""
        return self._runner().current(self)

    def get_action_queue(self) -> list[Any]:
        """Actions waiting after the current one."""
        return self._runner().queued(self)


def _with_model_sensors(agents: list[A], params: AgentSpawnParams) -> list[A]:
    """`agents`, each given the sensors and safety fields its catalogue model carries
    (`model_sensors`)."""
    given, fields = model_sensors(params.urdf_path)
    sensors = [lidar_params(one) for one in given]
    for agent in agents if sensors else ():
        for sensor in sensors:
            agent.add_lidar(sensor)
        if fields is not None and agent.drives:
            agent.set_safety_fields(fields)
    return agents


def _recipe(params: AgentSpawnParams) -> UrdfRecipe:
    return UrdfRecipe(resolve_urdf(params.urdf_path), params.use_fixed_base, params.mass)


def spawn_poses(positions: ArrayLike, orientations: ArrayLike) -> np.ndarray:
    """Rows of x, y, z, qx, qy, qz, qw from positions (N, 3) and quaternions (4,) or (N, 4),
    checked and normalised."""
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise ConfigError(f"positions must be (N, 3), got shape {pos.shape}")
    orn = np.asarray(orientations, dtype=np.float64)
    if orn.shape not in ((4,), (len(pos), 4)):
        raise ConfigError(f"orientations must be (4,) or ({len(pos)}, 4), got shape {orn.shape}")
    orn = np.broadcast_to(orn, (len(pos), 4))
    norm = np.linalg.norm(orn, axis=1, keepdims=True)
    if not (np.isfinite(pos).all() and np.isfinite(orn).all() and (norm > 1e-9).all()):
        raise ConfigError("positions must be finite and orientations non-zero quaternions")
    return np.hstack((pos, orn / norm))


def _check_tolerance(tolerance: float) -> None:
    if not (isinstance(tolerance, int | float) and math.isfinite(tolerance) and tolerance >= 0):
        raise ConfigError(f"tolerance must be a finite distance >= 0 m, got {tolerance!r}")
