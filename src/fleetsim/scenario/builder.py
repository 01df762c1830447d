"""Building a simulation from a scenario, in the loading order of seed 003.

1. environment files; objects;
2. each robot is loaded and wrapped, its plugins created, `on_plugin_load(robot)`;
3. each robot registered in the scene, `set_up_scene(scene)`;
4. joint handles initialised; `initialize()`; actions from the file queued.
World plugins get the same hooks (robot None) after the robots' at each stage. Anything wrong
raises a `ScenarioError` naming the file and the key path, and closes the half-built simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pydantic

from fleetsim import jit
from fleetsim.actions import (
    Action,
    ActionStatus,
    Drop,
    GoTo,
    JointAction,
    MoveTo,
    Pick,
    PoseAction,
    Wait,
)
from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.control import motion_model_names, register_motion_model
from fleetsim.core import MultiRobotSimulationCore, SimulationParams
from fleetsim.errors import ConfigError, FleetSimError, closest
from fleetsim.geometry import Path as WaypointPath
from fleetsim.geometry import Pose, ShapeParams, quat
from fleetsim.objects import SimObject, SimObjectSpawnParams
from fleetsim.scenario import schema as s
from fleetsim.scenario import usd_setup
from fleetsim.scenario.action_checks import cannot_do
from fleetsim.scenario.behavior_setup import robot_trees
from fleetsim.scenario.body_count import DEFAULT_MAX_BODIES, check_body_count
from fleetsim.scenario.faults_checks import FaultsCheckError, check_faults
from fleetsim.scenario.faults_plugin import FaultsPlugin
from fleetsim.scenario.loader import (
    MAX_REPORTED_ERRORS,
    LoadedScenario,
    ScenarioError,
    given,
    valid_keys,
)
from fleetsim.scenario.people_plugin import PeopleError, PeoplePlugin
from fleetsim.scenario.plugins import (
    Plugin,
    PluginConfigError,
    call_hook,
    find_plugin,
    import_object,
)
from fleetsim.scenario.usd_spec import as_spec
from fleetsim.site import Site
from fleetsim.site.layouts import site_layout
from fleetsim.usd import UsdScene

DEFAULT_RENDER_DT = 1.0 / 30.0
RETRY_AFTER_S = 1.0  # a repeated round in which an action failed starts again after this


@dataclass
class Scene:
    """What plugins see: the simulation, its robots and its named objects."""

    sim: MultiRobotSimulationCore
    robots: list[Agent] = field(default_factory=list)
    objects: dict[str, SimObject] = field(default_factory=dict)
    folder: Path | None = None  # the scenario file's folder (for files plugins name)

    @property
    def rng(self) -> np.random.Generator:
        """The simulation's seeded random generator."""
        return self.sim.rng

    def robot(self, name: str) -> Agent:
        """The robot named `name` (a `ConfigError` naming the robots otherwise)."""
        for robot in self.robots:
            if robot.name == name:
                return robot
        raise KeyError(f"no robot named '{name}' in the scene")

    def object(self, name: str) -> SimObject:
        """The object named `name` (a `ConfigError` naming the objects otherwise)."""
        return self.objects[name]


@dataclass
class ScenarioRun:
    """A built scenario: the simulation, its scene, every plugin, and the render interval."""

    sim: MultiRobotSimulationCore
    scene: Scene
    plugins: list[Plugin]
    render_dt: float
    source: Path


def pose_of(spec: s.PoseSpec | None) -> Pose:
    """The `Pose` a pose entry describes (the origin when None)."""
    if spec is None:
        return Pose()
    if spec.orientation is not None:
        return Pose(spec.position, spec.orientation)
    return Pose(spec.position, quat.from_yaw(spec.yaw))


def build(
    loaded: LoadedScenario,
    *,
    max_bodies: int = DEFAULT_MAX_BODIES,
    sample: int | None = None,
    **simulation_overrides: Any,
) -> ScenarioRun:
    """Create and populate the simulation for a loaded scenario.

    More than `max_bodies` bodies in all, or people (those who come at once and those due to
    arrive over the run), is an error naming the largest entry (checked before anything is
    built). With `sample`, each robot and object entry builds at most that many
    bodies and no actions are queued: every model, mesh, plugin and action is still checked
    (what `fleetsim validate` does), without the cost of a huge fleet.
    """
    spec = loaded.scenario
    check_body_count(loaded, max_bodies)
    params = simulation_params(loaded, simulation_overrides)
    sim = MultiRobotSimulationCore(params)
    try:
        with sim.world.backend.undrawn():  # building hundreds of bodies is faster undrawn
            scene, every = _populate(loaded, sim, sample)
    except BaseException:
        sim.close()
        raise
    jit.prepare(len(sim.world.motion.agents))  # a large fleet's first step waits for nothing
    render_dt = spec.simulation.render_dt or DEFAULT_RENDER_DT  # type: ignore[attr-defined]
    return ScenarioRun(sim, scene, every, render_dt, loaded.path)


def _populate(
    loaded: LoadedScenario, sim: MultiRobotSimulationCore, sample: int | None
) -> tuple[Scene, list[Plugin]]:
    """Build the scenario's site, objects, robots and plugins into `sim`, in the lifecycle's
    order; returns the scene and every plugin."""
    spec = loaded.scenario
    scene = Scene(sim, folder=loaded.path.parent)
    builder = _Builder(loaded, scene, sample)
    builder.environment()
    builder.site()
    builder.objects()
    robot_plugins = builder.robots()
    world_plugins = builder.plugins(spec.plugins, "plugins", robot=None)
    for robot, plugins in robot_plugins:  # 3. registered in the scene
        scene.robots.append(robot)
        call_hook(plugins, "set_up_scene", scene)
    call_hook(world_plugins, "set_up_scene", scene)
    for robot, _ in robot_plugins:  # 4. joint handles, then initialize
        if robot.profile.robot_type in ("arm", "mobile_manipulator"):
            robot.get_joint_positions()
    every = [p for _, plugins in robot_plugins for p in plugins] + world_plugins
    for plugin in every:  # (a configuration error names the plugin's place in the file)
        try:
            call_hook([plugin], "initialize")
        except PluginConfigError as exc:
            where = builder.where_of.get(id(plugin))
            if where is None:
                raise
            raise PluginConfigError(f"{loaded.at(where)}: {exc}") from exc
    if spec.people is not None and spec.people.groups:
        people = PeoplePlugin(spec.people)
        people.set_up_scene(scene)
        try:
            people.initialize()
        except PeopleError as exc:
            raise ConfigError(f"{loaded.at('people.' + exc.key)}: {exc.message}") from None
        except ConfigError as exc:
            raise ConfigError(f"{loaded.at('people')}: {exc}") from None
        every.append(people)
    if spec.faults is not None:  # last: it applies to what the others made
        try:
            check_faults(spec.faults, [r.name for r in scene.robots], sim.params.duration)
        except FaultsCheckError as exc:
            raise ConfigError(f"{loaded.at('faults.' + exc.key)}: {exc.message}") from None
        faults = FaultsPlugin(spec.faults, list(every))
        faults.set_up_scene(scene)
        try:
            faults.initialize()
        except ConfigError as exc:
            raise ConfigError(f"{loaded.at('faults')}: {exc}") from None
        every.append(faults)
    builder.queue_actions(robot_plugins, queue=sample is None)
    every += robot_trees(loaded, scene, builder.robot_entry)
    return scene, every


def simulation_params(loaded: LoadedScenario, overrides: dict[str, Any]) -> SimulationParams:
    """The `SimulationParams` of the scenario's `simulation` section and `overrides`."""
    section: dict[str, Any] = loaded.scenario.simulation.model_dump()  # type: ignore[attr-defined]
    physics_dt = section.pop("physics_dt")
    section.pop("render_dt")
    if physics_dt is not None:
        if "timestep" in loaded.raw.get("simulation", {}) and not math.isclose(
            physics_dt, section["timestep"]
        ):
            raise ScenarioError(
                f"{loaded.path}: simulation: physics_dt and timestep disagree; give one of them"
            )
        section["timestep"] = physics_dt
    section.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return SimulationParams.from_dict(section, where=f"{loaded.path} (simulation)")
    except FleetSimError as exc:
        raise ScenarioError(str(exc)) from None


class _Builder:
    def __init__(self, loaded: LoadedScenario, scene: Scene, sample: int | None = None) -> None:
        self.loaded = loaded
        self.scene = scene
        self.sim = scene.sim
        self.base = loaded.path.parent
        self.sample = sample
        self.robot_entry: list[int] = []  # which robots[i] entry each built robot came from
        self.occupied: set[int] = set()  # site nodes robots started on
        self.where_of: dict[int, str] = {}  # plugin id -> its key path ("plugins[0]")
        self.object_names = _object_names(loaded.scenario)
        self.stage: UsdScene | None = None  # environment.usd, as read

    def fail(self, where: str, exc: Exception, what: str = "") -> ScenarioError:
        """`file line N: key.path (what): message`; an error that already names a place in
        the file is passed on as it is."""
        if isinstance(exc, ScenarioError) and str(exc).startswith(str(self.loaded.path)):
            return exc
        return ScenarioError(f"{self.loaded.at(where)}{f' ({what})' if what else ''}: {exc}")

    def file(self, name: str) -> str:
        """A path from the file, relative to the scenario's folder (or a catalogue name)."""
        candidate = self.base / name
        return str(candidate) if candidate.exists() else name

    def environment(self) -> None:
        for i, env in enumerate(self.loaded.scenario.environment.files):
            try:
                pose = pose_of(env.pose)
                path = self.file(env.path)
                if path.lower().endswith((".urdf", ".sdf")):
                    body = self.sim.world.backend.load_urdf(
                        path, pose.position, pose.orientation, env.fixed
                    )
                    obj = self.sim.register_static_body(body)
                else:
                    obj = SimObject.from_mesh(
                        path,
                        pose,
                        sim_core=self.sim,
                        mesh_scale=(env.scale,) * 3,
                        collision_mode="static",
                    )
                self.scene.objects[Path(env.path).stem] = obj
            except FleetSimError as exc:
                raise self.fail(f"environment.files[{i}]", exc, env.path) from exc
        if (given := self.loaded.scenario.environment.usd) is not None:
            usd = as_spec(given)
            try:
                self.stage = usd_setup.environment(self.sim, self.base, usd)
            except FleetSimError as exc:
                raise self.fail("environment.usd", exc, usd.file) from exc

    def site(self) -> None:
        spec = self.loaded.scenario.site
        if spec is None:
            return
        try:
            if isinstance(spec.graph, s.SiteGraphSpec):
                site = Site.from_graph(spec.graph.nodes, spec.graph.lanes)
            elif spec.layout is not None:
                site = site_layout(dict(spec.layout))
            elif usd_setup.is_stage(spec):
                site = usd_setup.site(self.base, spec, self.stage)
            else:
                site = Site.from_file(
                    self.base / str(spec.file),
                    spec.format,
                    level=spec.level,
                    graph=spec.graph or 0,
                    cell_size=spec.cell_size,
                    blocked=spec.blocked,
                )
            self.sim.set_site(site)
        except FleetSimError as exc:
            raise self.fail("site.layout" if spec.layout is not None else "site", exc) from exc

    def start_poses(self, spec: s.RobotSpec, where: str) -> tuple[list[Pose], list[str] | None]:
        """Poses (and names, for building spawns) of robots started on site nodes."""
        site = self.sim.site
        if site is None:
            raise ScenarioError(f"{where}: robots start on nodes of a site: add a 'site:' section")
        graph, start = site.graph, spec.start
        names = None
        if isinstance(start, s.RandomStartSpec):
            nodes = site.free_nodes(start.random, self.sim.rng, start.at)
        elif start == "spawn":
            nodes = [graph.node(spawn.node) for spawn in site.spawns]
            names = [spawn.robot_name for spawn in site.spawns]
            if not nodes:
                raise ScenarioError(f"{where}: the site file places no robots (spawn_robot_name)")
        else:
            wanted = [start] if isinstance(start, str) else list(start or [])
            nodes = [graph.node(name) for name in wanted]
        poses = []
        for node in nodes:
            if node in self.occupied:
                raise ScenarioError(f"{where}: node '{graph.names[node]}' already has a robot")
            self.occupied.add(node)
            yaw = float(graph.yaw[node]) if np.isfinite(graph.yaw[node]) else 0.0
            x, y = graph.xy[node]
            poses.append(Pose.from_yaw(float(x), float(y), site.node_elevation(node), yaw))
        return poses, names

    def objects(self) -> None:
        for i, spec in enumerate(self.loaded.scenario.objects):
            try:
                shape = self.shape(spec.shape)
                count = spec.grid.count if spec.grid is not None else 1
                poses = _poses(spec.pose, spec.grid, self.sample)
                mode = "static" if spec.static else (spec.collision_mode or "normal_3d")
                for k, pose in enumerate(poses):
                    params = SimObjectSpawnParams(
                        visual_shape=shape,
                        initial_pose=pose,
                        mass=spec.mass or 0.0,
                        pickable=spec.pickable,
                        collision_mode=mode,  # type: ignore[arg-type]
                        name=_name(spec.name, "object", i, k, count),
                    )
                    obj = SimObject.from_params(params, sim_core=self.sim)
                    self.scene.objects[obj.name] = obj
            except FleetSimError as exc:
                raise self.fail(f"objects[{i}]", exc) from exc

    def shape(self, spec: s.ShapeSpec) -> ShapeParams:
        given: dict[str, Any] = {"shape_type": spec.type}
        for key, value in (
            ("half_extents", spec.half_extents),
            ("radius", spec.radius),
            ("height", spec.height),
        ):
            if value is not None:
                given[key] = value
        if spec.mesh is not None:
            given["mesh_path"] = self.file(spec.mesh)
        if spec.scale is not None:
            given["mesh_scale"] = spec.scale
        if spec.color is not None:
            given["rgba_color"] = spec.color
        return ShapeParams(**given)

    def robots(self) -> list[tuple[Agent, list[Plugin]]]:
        loaded: list[tuple[Agent, list[Plugin]]] = []
        for i, spec in enumerate(self.loaded.scenario.robots):
            if spec.motion_mode and ":" in spec.motion_mode:
                self.motion_model(spec.motion_mode, f"robots[{i}].motion_mode")
            try:
                names: list[str] | None = None
                if spec.start is not None:
                    poses, names = self.start_poses(spec, f"robots[{i}].start")
                    count = len(poses)
                    poses = poses[: self.sample]
                else:
                    count = spec.grid.count if spec.grid is not None else 1
                    poses = _poses(spec.pose, spec.grid, self.sample)
                chosen = {
                    k: v
                    for k, v in spec.model_dump().items()
                    if v is not None and k in AgentSpawnParams.__dataclass_fields__ and k != "name"
                }
                for k, pose in enumerate(poses):
                    name = names[k] if names else _name(spec.name, spec.model, i, k, count)
                    params = AgentSpawnParams(
                        urdf_path=spec.model,
                        initial_pose=pose,
                        name=name,
                        user_data={"index": k, "behavior": spec.behavior},
                        **chosen,
                    )
                    robot = Agent.from_params(params, sim_core=self.sim)
                    for sensor in spec.sensors:
                        robot.add_lidar(sensor.fields())
                    fields = spec.safety_fields
                    if fields is not None:
                        auto = robot.auto_safety_fields(fields.scanner) if fields.auto else None
                        robot.set_safety_fields(fields.params(auto))
                    plugins = self.plugins(spec.plugins, f"robots[{i}].plugins", robot)  # 2. loaded
                    loaded.append((robot, plugins))
                    self.robot_entry.append(i)
            except FleetSimError as exc:
                raise self.fail(f"robots[{i}]", exc, f"model {spec.model}") from exc
        return loaded

    def motion_model(self, path: str, where: str) -> None:
        """Import and register a motion model named "module:attribute" (once per name)."""
        if path in motion_model_names():
            return
        try:
            register_motion_model(path, import_object(path, self.base, "motion model"))
        except FleetSimError as exc:
            raise self.fail(where, exc) from exc

    def plugins(self, specs: list[s.PluginSpec], where: str, robot: Agent | None) -> list[Plugin]:
        made = []
        for j, spec in enumerate(specs):
            here = f"{where}[{j}]"
            try:
                cls = find_plugin(spec.type, spec.class_, search_dir=self.base)
            except FleetSimError as exc:
                raise self.fail(here, exc) from exc
            try:
                plugin = cls(**spec.params)
            except pydantic.ValidationError as exc:
                message = self.params_errors(f"{here}.params", exc, cls.Params, spec.params)
                raise ScenarioError(message) from None
            except FleetSimError as exc:
                raise self.fail(f"{here}.params", exc) from exc
            except Exception as exc:
                raise self.fail(
                    here, ScenarioError(f"{cls.__name__}() raised {type(exc).__name__}: {exc}")
                ) from exc
            call_hook([plugin], "on_plugin_load", robot)
            self.where_of[id(plugin)] = here
            made.append(plugin)
        return made

    def params_errors(
        self, where: str, exc: pydantic.ValidationError, model: Any, params: dict[str, Any]
    ) -> str:
        """A plugin's parameter errors, one line each with the key path, line and a hint."""
        lines = []
        for err in exc.errors()[:MAX_REPORTED_ERRORS]:
            keys = ".".join(str(k) for k in err["loc"])
            place = f"{where}.{keys}" if keys else where
            if err["type"] == "extra_forbidden":
                fields = valid_keys(err["loc"][:-1], params, model)
                guess = closest(str(err["loc"][-1]), fields)
                hint = f"did you mean '{guess}'?" if guess else f"valid keys: {', '.join(fields)}"
                lines.append(f"{self.loaded.at(place)}: unknown key: {hint}")
            else:
                lines.append(f"{self.loaded.at(place)}: {err['msg']}{given(err)}")
        return "\n".join(lines)

    def queue_actions(self, robots: list[tuple[Agent, list[Plugin]]], queue: bool = True) -> None:
        """Check every robot's actions against what it is; queue them (unless only checking)."""
        entries = self.loaded.scenario.robots
        for (robot, _), i in zip(robots, self.robot_entry, strict=True):
            spec = entries[i]
            for j, action in enumerate(spec.actions):
                problem = self.action_problem(action, robot)
                if problem:
                    raise self.fail(f"robots[{i}].actions[{j}]", problem, action.type)
            if not (queue and spec.actions):
                continue
            try:
                _Repeater(self, robot, spec).queue()
            except FleetSimError as exc:
                raise self.fail(f"robots[{i}].actions", exc) from exc

    def action_problem(self, action: Any, robot: Agent) -> ScenarioError | None:
        """Why `robot` can never do `action` (a missing object, its kind), or None."""
        named = action.object if isinstance(action, s.PickSpec | s.DropSpec) else None
        if named and named not in self.object_names:
            guess = closest(named, self.object_names)
            hint = f"; did you mean '{guess}'?" if guess else " (objects are named by 'name')"
            return ScenarioError(f"no object named '{named}'{hint}")
        if isinstance(action, s.GoToSpec):
            site = self.sim.site
            if site is None:
                return ScenarioError("go_to needs a site: add a 'site:' section")
            try:
                site.graph.node(action.node)
            except FleetSimError as exc:
                return ScenarioError(str(exc))
        problem = cannot_do(action, robot)
        return ScenarioError(problem) if problem else None

    def action(self, spec: Any, robot: Agent) -> Action:
        if isinstance(spec, s.MoveToSpec):
            target = (
                pose_of(spec.pose)
                if spec.pose is not None
                else WaypointPath([pose_of(p) for p in spec.path or []])
            )
            return MoveTo(target, spec.tolerance, spec.align_orientation)
        if isinstance(spec, s.WaitSpec):
            return Wait(spec.duration)
        if isinstance(spec, s.GoToSpec):
            return GoTo(spec.node, spec.tolerance)
        if isinstance(spec, s.JointsSpec):
            return JointAction(spec.targets, spec.tolerance, spec.max_force)
        if isinstance(spec, s.ReachSpec):
            return PoseAction(spec.position, spec.orientation, tolerance=spec.tolerance)
        if isinstance(spec, s.PickSpec):
            obj = self.scene.objects[spec.object].object_id if spec.object else None
            return Pick(
                target_object_id=obj,
                target_position=spec.position,
                search_radius=spec.search_radius,
                attach_link=spec.attach_link,
                use_approach=spec.use_approach,
                approach_offset=spec.approach_offset,
                joint_targets=spec.joint_targets,
                ee_target_position=spec.ee_target_position,
                continue_on_ik_failure=spec.continue_on_ik_failure,
                reach=spec.reach,
                stand_offset=spec.stand_offset,
            )
        assert isinstance(spec, s.DropSpec)
        return Drop(
            drop_pose=pose_of(spec.pose) if spec.pose is not None else None,
            drop_relative_pose=pose_of(spec.relative_pose)
            if spec.relative_pose is not None
            else None,
            target_object_id=self.scene.objects[spec.object].object_id if spec.object else None,
            place_gently=spec.place_gently,
            use_approach=spec.use_approach,
            approach_offset=spec.approach_offset,
            drop_offset=spec.drop_offset,
            joint_targets=spec.joint_targets,
            ee_target_position=spec.ee_target_position,
            continue_on_ik_failure=spec.continue_on_ik_failure,
            reach=spec.reach,
        )


class _Repeater:
    """Queues a robot's actions from the file, again when the last one is done if `repeat` says.

    A round in which an action failed is repeated after `RETRY_AFTER_S`, and a round that took
    no simulated time after one step, so a round that cannot make progress never spins.
    """

    def __init__(self, builder: _Builder, robot: Agent, spec: s.RobotSpec) -> None:
        self.builder, self.robot, self.spec = builder, robot, spec
        self.rounds_left = math.inf if spec.repeat is True else int(spec.repeat)
        self.round: list[Action] = []
        self.round_started = 0.0

    def queue(self, pause_s: float = 0.0) -> None:
        self.round = [self.builder.action(a, self.robot) for a in self.spec.actions]
        self.round_started = self.builder.sim.sim_time
        self.round[-1].on_done = self.again
        self.robot.add_action_sequence(([Wait(pause_s)] if pause_s > 0 else []) + self.round)

    def again(self, agent: Agent, action: Action) -> None:
        if self.rounds_left <= 0:
            return
        self.rounds_left -= 1
        sim = self.builder.sim
        if any(a.status is ActionStatus.FAILED for a in self.round):
            self.queue(RETRY_AFTER_S)
        elif sim.sim_time <= self.round_started:
            self.queue(sim.params.timestep)
        else:
            self.queue()


def _poses(
    pose: s.PoseSpec | None, grid: s.GridSpec | None, limit: int | None = None
) -> list[Pose]:
    """The poses of an entry (the first `limit` of a grid)."""
    if grid is None:
        return [pose_of(pose)]
    orientation = quat.from_yaw(grid.yaw)
    return [Pose(p, orientation) for p in grid.positions()[:limit]]


def _object_names(spec: s.Scenario) -> set[str]:
    """Every name objects of the scenario get (without building them)."""
    names = {Path(env.path).stem for env in spec.environment.files}
    for i, entry in enumerate(spec.objects):
        count = entry.grid.count if entry.grid is not None else 1
        names.update(_name(entry.name, "object", i, k, count) for k in range(count))
    return names


def _name(name: str | None, default: str, spec_index: int, k: int, count: int) -> str:
    base = name or f"{default}_{spec_index}"
    return base if count == 1 else f"{base}_{k}"
