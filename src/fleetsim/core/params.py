"""`SimulationParams`: every setting of a simulation, with its default, in one dataclass.

Values are checked on construction (types and ranges), whether they come from Python, a dict or
a YAML file; unknown keys are an error that names the closest valid key.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, fields
from pathlib import Path as FsPath
from typing import Annotated, Any, Literal

import pydantic
import yaml
from pydantic import Field

from fleetsim.errors import AssetNotFoundError, ConfigError, unknown_key_message

PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Vec3 = tuple[FiniteFloat, FiniteFloat, FiniteFloat]
PoseSync = Literal["auto", "eager", "lazy"]
BodyCreation = Literal["auto", "eager", "lazy"]
CellSizeMode = Literal["constant", "auto_initial", "auto_adaptive"]

# Fields a running simulation reads afresh, so they may change after it is created. The others
# shaped what was built (the client, the step, the collision system) and are fixed by then.
LIVE_FIELDS = frozenset(
    {
        "target_rtf",
        "duration",
        "collision_check_frequency",
        "max_steps_per_frame",
        "gui_min_fps",
        "monitor",
        "camera_mode",
        "camera_view",
        "camera_distance",
        "camera_yaw",
        "camera_pitch",
        "camera_target",
    }
)


@dataclass
class SimulationParams:
    """Configuration of a `MultiRobotSimulationCore`.

    Attributes:
        gui: open the PyBullet GUI window (headless DIRECT mode when False).
        timestep: simulated seconds per step.
        target_rtf: real-time factor for `run_simulation` (2 = twice real time; 0 = as fast as
            possible, never sleeping).
        duration: simulated seconds `run_simulation()` runs for; None = until `stop()`.
        physics: run PyBullet dynamics for bodies with mass (otherwise purely kinematic).
        monitor: show the live data monitor.
        enable_floor: load PyBullet's plane.urdf as the floor (also after `reset()`).
        gravity: m/s^2, used when physics is on.
        camera_mode: GUI camera: "auto" frames the fleet; "manual" uses the distance, yaw,
            pitch and target below.
        camera_view: "top_down" or "perspective" (auto mode).
        camera_distance: metres from the target (manual mode).
        camera_yaw: degrees (manual mode).
        camera_pitch: degrees (manual mode).
        camera_target: the point looked at (manual mode).
        enable_visual_shapes: show visual shapes in the GUI.
        enable_collision_shapes: show collision shapes in the GUI.
        enable_structure_transparency: draw static structure see-through in the GUI.
        enable_shadows: GUI shadows.
        enable_gui_panels: PyBullet's side panels in the GUI.
        spatial_hash_cell_size_mode: "constant", "auto_initial" (measured once) or
            "auto_adaptive" (re-measured when the body count doubles or halves).
        spatial_hash_cell_size: cell edge in metres (required for "constant").
        collision_check_frequency: collision checks per simulated second; None = every step,
            0 = never automatically (`check_collisions()` still works).
        collision_narrowphase: "aabb" (boxes only), "closest_points" (PyBullet distance query on
            the broadphase pairs) or "contact_points" (physics contacts; needs physics).
        collision_margin: metres; with closest_points, bodies this close count as colliding.
        collision_footprints: with closest_points, a robot that drives and is built of boxes,
            cylinders, spheres and capsules on fixed or continuous (wheel) joints collides by
            its footprint: the box around its shapes in its own frame, turning with it, tested
            exactly in arrays. False asks PyBullet about its exact shapes (slower). Arms, lifts
            and meshes always go to PyBullet.
        ignore_static_collision: skip every pair with a STATIC body.
        enable_collision_color_change: tint colliding bodies red while they touch (GUI).
        pose_sync: "eager" pushes moved poses to PyBullet every step; "lazy" only when something
            reads PyBullet; "auto" is eager with physics, lazy otherwise (the GUI then gets the
            poses once per drawn frame, not once per step).
        body_creation: "eager" makes a PyBullet body for every object at once; "lazy" keeps a
            robot whose collisions the arrays answer (a single box, or a mobile robot's
            footprint) as a row only, after the first one of its model, and static boxes
            (`SimObject.static_boxes`: sites, twins) as rows only, until something asks
            PyBullet about it (its `object_id`, a distance query, a joint, a camera image,
            `sim.sync()`): fleets spawn many times faster in a fraction of the memory. "auto"
            is lazy unless the GUI or physics is on (both need every body).
        seed: seed of the simulation's random generator `sim.rng` (None = random).
        max_steps_per_frame: most steps `run_simulation` takes at once to catch up.
        gui_min_fps: least GUI frame rate kept while paused or ahead of time.

    Assigning a field validates it like construction does. A simulation keeps its own copy
    (`sim.params`); on it only `LIVE_FIELDS` may change, the others raise `ConfigError`.
    """

    gui: bool = False
    timestep: PositiveFloat = 1.0 / 240.0
    target_rtf: NonNegativeFloat = 1.0
    duration: PositiveFloat | None = None
    physics: bool = False
    monitor: bool = False
    enable_floor: bool = True
    gravity: Vec3 = (0.0, 0.0, -9.81)
    camera_mode: Literal["auto", "manual"] = "auto"
    camera_view: Literal["perspective", "top_down"] = "perspective"
    camera_distance: PositiveFloat = 10.0
    camera_yaw: FiniteFloat = 45.0
    camera_pitch: FiniteFloat = -45.0
    camera_target: Vec3 = (0.0, 0.0, 0.0)
    enable_visual_shapes: bool = True
    enable_collision_shapes: bool = False
    enable_structure_transparency: bool = False
    enable_shadows: bool = False
    enable_gui_panels: bool = False
    spatial_hash_cell_size_mode: CellSizeMode = "auto_adaptive"
    spatial_hash_cell_size: PositiveFloat | None = None
    collision_check_frequency: NonNegativeFloat | None = None
    collision_narrowphase: Literal["aabb", "closest_points", "contact_points"] = "closest_points"
    collision_margin: NonNegativeFloat = 0.0
    collision_footprints: bool = True
    ignore_static_collision: bool = False
    enable_collision_color_change: bool = False
    pose_sync: PoseSync = "auto"
    body_creation: BodyCreation = "auto"
    seed: Annotated[int, Field(ge=0)] | None = None
    max_steps_per_frame: Annotated[int, Field(ge=1)] = 10
    gui_min_fps: PositiveFloat = 30.0

    def __post_init__(self) -> None:
        problems = []
        for name, adapter in _adapters().items():
            try:
                object.__setattr__(self, name, adapter.validate_python(getattr(self, name)))
            except pydantic.ValidationError as exc:
                msgs = "; ".join(e["msg"] for e in exc.errors())
                problems.append(f"{name}: {msgs} (got {_short(getattr(self, name))})")
        problems += self._combination_problems() if not problems else []
        if problems:
            raise ConfigError("invalid simulation parameters:\n  " + "\n  ".join(problems))
        object.__setattr__(self, "_ready", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if not getattr(self, "_ready", False) or name not in _adapters():
            object.__setattr__(self, name, value)
            return
        if getattr(self, "_in_use", False) and name not in LIVE_FIELDS:
            raise ConfigError(
                f"{name} cannot change once the simulation is created (it is "
                f"{_short(getattr(self, name))}); create a new simulation with "
                f"params.replace({name}=...). Live fields: {', '.join(sorted(LIVE_FIELDS))}"
            )
        try:
            checked = _adapters()[name].validate_python(value)
        except pydantic.ValidationError as exc:
            msgs = "; ".join(e["msg"] for e in exc.errors())
            raise ConfigError(f"{name}: {msgs} (got {_short(value)})") from None
        old = getattr(self, name)
        object.__setattr__(self, name, checked)
        problems = self._combination_problems()
        if problems:
            object.__setattr__(self, name, old)
            raise ConfigError("; ".join(problems))

    def in_use(self) -> SimulationParams:
        """A validated copy for a simulation: on it only `LIVE_FIELDS` may change."""
        copy = self.replace()
        object.__setattr__(copy, "_in_use", True)
        return copy

    def _combination_problems(self) -> list[str]:
        problems = []
        if self.body_creation == "lazy" and (self.gui or self.physics):
            problems.append(
                "body_creation: 'lazy' cannot be used with the GUI or physics (both need every "
                "body in PyBullet); use 'auto' or 'eager'"
            )
        if self.collision_narrowphase == "contact_points" and not self.physics:
            problems.append(
                "collision_narrowphase: 'contact_points' needs physics=True "
                "(kinematic bodies have no contacts); use 'closest_points'"
            )
        if self.spatial_hash_cell_size_mode == "constant" and self.spatial_hash_cell_size is None:
            problems.append(
                "spatial_hash_cell_size: required when spatial_hash_cell_size_mode is 'constant'"
            )
        return problems

    @property
    def eager_sync(self) -> bool:
        """Whether poses are pushed to PyBullet every step (see `pose_sync`)."""
        if self.pose_sync == "auto":
            return self.physics
        return self.pose_sync == "eager"

    @property
    def lazy_bodies(self) -> bool:
        """Whether robots may wait for their PyBullet body (see `body_creation`)."""
        if self.body_creation == "auto":
            return not (self.gui or self.physics)
        return self.body_creation == "lazy"

    def replace(self, **changes: Any) -> SimulationParams:
        """A copy with some fields changed (validated like any other construction)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return self.from_dict({**values, **changes})

    @classmethod
    def from_dict(cls, config: Any, where: str = "simulation parameters") -> SimulationParams:
        """From a mapping; an unknown key is an error naming the closest valid key."""
        if not isinstance(config, dict):
            kind = type(config).__name__
            raise ConfigError(f"{where} must be a mapping of parameter names to values, got {kind}")
        valid = {f.name for f in fields(cls)}
        for key in config:
            if key not in valid:
                raise ConfigError(unknown_key_message(str(key), valid, where))
        try:
            return cls(**config)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    @classmethod
    def from_config(cls, path: str | FsPath) -> SimulationParams:
        """From a YAML file: the whole mapping, or its `simulation:` section when present."""
        data = load_yaml_mapping(path)
        section = data.get("simulation", data) if isinstance(data.get("simulation"), dict) else data
        where = f"{path} (simulation)" if section is not data else str(path)
        return cls.from_dict(section, where=where)

    from_yaml = from_config


def load_yaml_mapping(path: str | FsPath) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping; errors name the file (and line)."""
    file = FsPath(path)
    if not file.is_file():
        raise AssetNotFoundError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top level")
    return data


def _short(value: Any, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@functools.cache
def _adapters() -> dict[str, pydantic.TypeAdapter[Any]]:
    hints = typing.get_type_hints(SimulationParams, include_extras=True)
    return {f.name: pydantic.TypeAdapter(hints[f.name]) for f in fields(SimulationParams)}
