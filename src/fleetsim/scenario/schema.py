"""The scenario file format, as pydantic models (unknown keys are rejected everywhere).

Top level: `simulation` (SimulationParams fields plus `physics_dt`, `render_dt`), `environment`
(model files with poses), `robots`, `objects`, `plugins` (world plugins). Fields left out keep the
defaults of the classes they configure (SimulationParams, AgentSpawnParams, ShapeParams).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import math
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetsim.core import SimulationParams
from fleetsim.scenario.faults_spec import FaultsSpec
from fleetsim.scenario.people_spec import PeopleSpec
from fleetsim.scenario.sensors_spec import LidarSpec, SafetyFieldsSpec
from fleetsim.scenario.spec_base import (
    CollisionModeName,
    Finite,
    NonNegative,
    Positive,
    Quat,
    Spec,
    Vec3,
)
from fleetsim.scenario.usd_spec import UsdSource


class PoseSpec(Spec):
    """A pose: `[x, y, z]`, `[x, y, z, yaw]`, or {position, yaw} / {position, orientation}."""

    position: Vec3
    """[x, y, z] in metres."""
    yaw: Finite = 0.0
    """Heading in radians (ignored when `orientation` is given)."""
    orientation: Quat | None = None
    """Quaternion [x, y, z, w]."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) in (3, 4):
            return {"position": value[:3], "yaw": value[3] if len(value) == 4 else 0.0}
        return value

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: Any, handler: pydantic.GetJsonSchemaHandler
    ) -> dict[str, Any]:
        """The shorthand lists are valid poses too (editors must not flag them)."""
        full = handler(core_schema)
        shorthand = {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 3,
            "maxItems": 4,
            "description": "[x, y, z] or [x, y, z, yaw] (metres, radians)",
        }
        return {"anyOf": [shorthand, full], "description": cls.__doc__}


class GridSpec(Spec):
    """`count` items on a grid from `origin`, `spacing` metres apart, `columns` per row.

    `spacing` is one number, `[dx, dy]` or `[dx, dy, dz]`; with `rows` as well, items beyond
    `columns` x `rows` go on further layers, `dz` higher each.
    """

    count: Annotated[int, Field(gt=0)]
    """How many items."""
    spacing: Positive | tuple[Positive, Positive] | tuple[Positive, Positive, Positive] = 1.0
    """Metres between items: d, [dx, dy] or [dx, dy, dz]."""
    origin: Vec3 = (0.0, 0.0, 0.0)
    """Position of the first item [x, y, z] in metres."""
    columns: Annotated[int, Field(gt=0)] | None = None
    """Items per row (along x); default ceil(sqrt(count))."""
    rows: Annotated[int, Field(gt=0)] | None = None
    """Rows per layer (along y); more items stack in layers dz apart."""
    yaw: Finite = 0.0
    """Heading of every item in radians."""

    def positions(self) -> np.ndarray:
        """The grid's item positions, (count, 3)."""
        cols = self.columns or math.ceil(math.sqrt(self.count))
        spacing = (self.spacing,) * 3 if isinstance(self.spacing, float | int) else self.spacing
        dx, dy = spacing[0], spacing[1]
        dz = spacing[2] if len(spacing) == 3 else 0.0
        per_layer = cols * self.rows if self.rows else self.count
        k = np.arange(self.count)
        in_layer = k % per_layer
        grid = np.column_stack(
            ((in_layer % cols) * dx, (in_layer // cols) * dy, (k // per_layer) * dz)
        )
        result: np.ndarray = grid + np.asarray(self.origin)
        return result


class PluginSpec(Spec):
    """A plugin by registered `type` or dotted `class` path, with its `params`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: str | None = None
    """A registered plugin name: patrol, random_goals, shuttle, or your own."""
    class_: str | None = Field(None, alias="class")
    """A plugin class as "module:Class" (a module next to the scenario file is found)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The plugin's parameters (checked against its Params model)."""

    @model_validator(mode="after")
    def _one_of(self) -> PluginSpec:
        if (self.type is None) == (self.class_ is None):
            raise ValueError(
                "give exactly one of 'type' (a registered name) or 'class' (module.Class)"
            )
        return self


JointTargets = list[Finite] | dict[str, Finite]


class MoveToSpec(Spec):
    """Drive to a pose, or through a path of poses."""

    type: Literal["move_to"]
    """The action kind."""
    pose: PoseSpec | None = None
    """Where to go."""
    path: list[PoseSpec] | None = None
    """Waypoints to visit in order, instead of `pose`."""
    tolerance: NonNegative = 0.01
    """Metres from the goal that count as arrived."""
    align_orientation: bool = True
    """End facing the goal's yaw."""

    @model_validator(mode="after")
    def _target(self) -> MoveToSpec:
        if (self.pose is None) == (self.path is None):
            raise ValueError("move_to needs exactly one of 'pose' or 'path'")
        return self


class WaitSpec(Spec):
    """Wait a while."""

    type: Literal["wait"]
    """The action kind."""
    duration: NonNegative
    """Simulated seconds."""


class _HandSpec(Spec):
    """What Pick and Drop share."""

    object: str | None = None
    """An object by its name."""
    use_approach: bool = True
    """Drive approach pose -> stand pose -> act -> back out; false acts where the robot is."""
    approach_offset: NonNegative = 1.0
    """Metres before the target where the approach starts."""
    joint_targets: JointTargets | None = None
    """Arm joint targets to take before acting (a list in order, or by joint name)."""
    ee_target_position: Vec3 | None = None
    """End-effector position [x, y, z] to reach by IK before acting."""
    continue_on_ik_failure: bool = True
    """Act even when the IK target was not reached (the reach check still applies)."""
    reach: NonNegative = 0.3
    """Metres the object may be from the robot's body, or from the gripper holding it."""


class PickSpec(_HandSpec):
    """Pick up an object (by name, or the nearest pickable one near a position)."""

    type: Literal["pick"]
    """The action kind."""
    position: Vec3 | None = None
    """Pick the nearest pickable object within `search_radius` of this point."""
    search_radius: Positive = 0.5
    """Metres, with `position`."""
    attach_link: int | str | None = None
    """Link to hold the object with (index or name); default the end effector, else the base."""
    stand_offset: NonNegative = 0.0
    """Stop this many metres short of the object (an arm that reaches forward)."""


class DropSpec(_HandSpec):
    """Put down a carried object."""

    type: Literal["drop"]
    """The action kind."""
    pose: PoseSpec | None = None
    """Where the object ends up."""
    relative_pose: PoseSpec | None = None
    """Instead of `pose`: release it at its current pose composed with this offset."""
    place_gently: bool = True
    """Place it exactly at `pose`; false releases it higher so that, with physics, it falls."""
    drop_offset: NonNegative = 0.0
    """Stop this many metres short of `pose`."""


class JointsSpec(Spec):
    """Move arm joints to targets."""

    type: Literal["joints"]
    """The action kind."""
    targets: JointTargets
    """A list for all controllable joints in order, or targets by joint name (rad or m)."""
    tolerance: NonNegative | None = None
    """Done when every joint is this close (default: the robot's joint_tolerance, or 0.01)."""
    max_force: Positive = 500.0
    """Motor force under physics."""


class ReachSpec(Spec):
    """Move the end effector to a position by IK."""

    type: Literal["reach"]
    """The action kind."""
    position: Vec3
    """[x, y, z] in the world frame, metres."""
    orientation: Quat | None = None
    """Quaternion [x, y, z, w] of the end effector."""
    tolerance: Positive = 0.02
    """Metres from the target that count as reached."""


class GoToSpec(Spec):
    """Drive to a named place of the site, along its lanes."""

    type: Literal["go_to"]
    """The action kind."""
    node: str
    """The node's name."""
    tolerance: NonNegative = 0.05
    """Metres from the node that count as arrived."""


ActionSpec = Annotated[
    MoveToSpec | WaitSpec | PickSpec | DropSpec | JointsSpec | ReachSpec | GoToSpec,
    Field(discriminator="type"),
]


class RandomStartSpec(Spec):
    """Robots on nodes of the site chosen with the simulation's seed."""

    random: Annotated[int, Field(gt=0)]
    """How many robots (each on its own node)."""
    at: str | None = None
    """Only nodes with this flag (parking_spot, charger, ...)."""


class RobotSpec(Spec):
    """One robot (`pose`) or a grid of identical robots (`grid`)."""

    name: str | None = None
    """Name; a grid's robots are name_0, name_1, ..."""
    model: str
    """A catalogue name (fleetsim models) or a URDF path."""
    pose: PoseSpec | None = None
    """Where the robot stands."""
    grid: GridSpec | None = None
    """A grid of robots instead of one."""
    start: str | list[str] | RandomStartSpec | None = None
    """Start at site nodes instead: a node name, a list (one robot each), {random: N} (N nodes
    chosen with the seed), or "spawn" (the robots an Open-RMF building file places)."""
    motion_mode: str | None = None
    """omnidirectional, differential, a registered motion model, or "module:attribute"."""
    max_linear_vel: Positive | None = None
    """m/s."""
    max_linear_accel: Positive | None = None
    """m/s^2."""
    max_angular_vel: Positive | None = None
    """rad/s."""
    max_angular_accel: Positive | None = None
    """rad/s^2."""
    use_fixed_base: bool | None = None
    """Bolt the base to the world (arms); such robots cannot drive."""
    mass: NonNegative | None = None
    """Base mass in kg (default: the URDF's)."""
    collision_mode: CollisionModeName | None = None
    """How the robot takes part in collision checks."""
    pickable: bool | None = None
    """Whether other robots may pick this one."""
    joint_tolerance: NonNegative | list[NonNegative] | dict[str, NonNegative] | None = None
    """Default joint tolerance for joints actions (one value, by joint index, or by name)."""
    sensors: list[LidarSpec] = Field(default_factory=list)
    """Sensors on each robot, besides those its model carries."""
    safety_fields: SafetyFieldsSpec | None = None
    """Protective and warning fields read from one of its lidars."""
    plugins: list[PluginSpec] = Field(default_factory=list)
    """Behaviours attached to each robot."""
    actions: list[ActionSpec] = Field(default_factory=list)
    """Actions queued on each robot at the start."""
    repeat: bool | Annotated[int, Field(ge=0)] = False
    """Queue the actions again when done: true forever, or a number of times."""
    behavior: str | None = None
    """A behaviour tree each robot runs: a BehaviorTree.CPP v4 XML file (relative to this
    file, or a bundled tree by name), with fleetsim's nodes as leaves (see the behaviour trees
    guide); instead of `actions`."""
    blackboard: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Entries of each robot's blackboard at the start (the tree reads them as `{key}`)."""

    @model_validator(mode="after")
    def _placement(self) -> RobotSpec:
        if sum(x is not None for x in (self.pose, self.grid, self.start)) > 1:
            raise ValueError("give one of 'pose', 'grid' or 'start'")
        if self.behavior is not None and self.actions:
            raise ValueError("give 'actions' or a 'behavior' tree, not both")
        return self


class ShapeSpec(Spec):
    """A box, sphere, cylinder or mesh."""

    type: Literal["box", "sphere", "cylinder", "mesh"] = "box"
    """The shape kind."""
    half_extents: Vec3 | None = None
    """Box half sizes [x, y, z] in metres."""
    radius: Positive | None = None
    """Sphere or cylinder radius in metres."""
    height: Positive | None = None
    """Cylinder height in metres."""
    mesh: str | None = None
    """Mesh file (.obj, .stl, .dae), relative to the scenario file."""
    scale: Vec3 | None = None
    """Mesh scale per axis."""
    color: Quat | None = None
    """RGBA, each 0..1."""


class ObjectSpec(Spec):
    """A box, sphere, cylinder or mesh (`pose`), or a grid of them (`grid`)."""

    name: str | None = None
    """Name; a grid's objects are name_0, name_1, ... (actions refer to them by name)."""
    shape: ShapeSpec = Field(default_factory=ShapeSpec)
    """What it looks and collides like."""
    pose: PoseSpec | None = None
    """Where it stands."""
    grid: GridSpec | None = None
    """A grid of objects instead of one."""
    pickable: bool = False
    """Whether robots may pick it up."""
    static: bool = False
    """Structure that never moves (collision mode static)."""
    mass: NonNegative | None = None
    """kg; with physics on, mass > 0 makes it dynamic."""
    collision_mode: CollisionModeName | None = None
    """How it takes part in collision checks."""

    @model_validator(mode="after")
    def _placement(self) -> ObjectSpec:
        if self.pose is not None and self.grid is not None:
            raise ValueError("give 'pose' or 'grid', not both")
        return self


class SiteGraphSpec(Spec):
    """A navigation graph written in the scenario."""

    nodes: list[dict[str, Any]]
    """Nodes: {name, x, y, yaw?, level?, charger?, parking_spot?, holding_point?, pickup?,
    dropoff?}."""
    lanes: list[dict[str, Any]] = Field(default_factory=list)
    """Lanes: {from, to, bidirectional? (default true), speed_limit?, mutex?}."""


class SiteSpec(Spec):
    """Where robots drive: an inline graph, a MovingAI grid map, or an Open-RMF building."""

    graph: SiteGraphSpec | Annotated[int, Field(ge=0)] | None = None
    """The inline graph; or, with an Open-RMF building file, which navigation graph (0)."""
    file: str | None = None
    """A .map grid map, a .building.yaml file or an OpenUSD stage, relative to the scenario."""
    format: Literal["movingai", "rmf_building", "usd"] | None = None
    """The file's format (default: from its name)."""
    cell_size: Positive = 1.0
    """Grid maps (and a stage's floor plan): metres per cell."""
    clearance: tuple[float, float] = (0.05, 2.0)
    """OpenUSD stages: the heights (m) between which a prim blocks a floor plan's cell."""
    blocked: str = ""
    """Grid maps: extra characters that mark blocked cells (beyond @, O, T, W)."""
    level: str | None = None
    """Buildings: the level (default: the first)."""
    layout: dict[str, Any] | None = None
    """A generated site: {type: warehouse, aisles: 10, ...} (see fleetsim.site.layouts)."""

    @model_validator(mode="after")
    def _source(self) -> SiteSpec:
        inline = isinstance(self.graph, SiteGraphSpec)
        if sum((self.file is not None, inline, self.layout is not None)) != 1:
            raise ValueError(
                "give one of 'graph' (nodes and lanes), 'file' (a grid map or a building) or "
                "'layout' (a generated warehouse)"
            )
        return self


class EnvironmentFileSpec(Spec):
    """A URDF, SDF or mesh file placed in the world (static structure by default)."""

    path: str
    """Relative to the scenario file, or in pybullet_data."""
    pose: PoseSpec | None = None
    """Where it is placed."""
    fixed: bool = True
    """Fix a URDF's base to the world."""
    static: bool = True
    """Treat it as static structure in collision checks."""
    scale: Positive = 1.0
    """Mesh scale."""


class EnvironmentSpec(Spec):
    """The site's fixed structure."""

    files: list[EnvironmentFileSpec] = Field(default_factory=list)
    """Model files placed in the world."""
    usd: UsdSource | None = None
    """An OpenUSD stage's geometry as static boxes: a file, or {file, include, exclude}."""


def _simulation_section() -> type[BaseModel]:
    """SimulationParams' fields (same types, rules and defaults, and descriptions from its
    docstring) plus physics_dt and render_dt."""
    hints = typing.get_type_hints(SimulationParams, include_extras=True)
    notes = _attribute_notes(SimulationParams.__doc__ or "")
    fields: dict[str, Any] = {
        f.name: (hints[f.name], Field(f.default, description=notes.get(f.name, f.name)))
        for f in dataclasses.fields(SimulationParams)
    }
    fields["physics_dt"] = (
        Positive | None,
        Field(None, description="Simulated seconds per physics step (the same as timestep)."),
    )
    fields["render_dt"] = (
        Positive | None,
        Field(None, description="Simulated seconds between on_render hooks (default 1/30)."),
    )
    model: type[BaseModel] = pydantic.create_model(
        "SimulationSpec", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _attribute_notes(doc: str) -> dict[str, str]:
    """{name: text} from a Google-style "Attributes:" section; "a, b: text" gives both."""
    notes: dict[str, str] = {}
    section = doc.split("Attributes:", 1)[-1]
    names: list[str] = []
    for line in section.splitlines():
        text = line.strip()
        if not text:
            continue
        head, sep, rest = text.partition(": ")
        if sep and line.startswith(" " * 8) and not line.startswith(" " * 12):
            names = [n.strip() for n in head.split(",")]
            for name in names:
                notes[name] = rest
        else:
            for name in names:
                notes[name] += " " + text
    return notes


SimulationSpec = _simulation_section()


Waypoint = Annotated[tuple[Finite, Finite, Finite], Field(description="[x, y, yaw]")]


class RmfSpec(Spec):
    """How `fleetsim rmf` serves the robots to Open-RMF (the fleet-manager API)."""

    map_name: str | None = None
    """The robots' `map_name` (default: the RMF building's level, else L1)."""
    activities: dict[str, dict[str, Annotated[list[Waypoint], Field(min_length=1)]]] = Field(
        default_factory=dict
    )
    """Paths RMF can start by name: {activity: {label: [[x, y, yaw], ...]}} (e.g. cleaning)."""
    blocked_after_s: Positive = 5.0
    """A robot whose command makes no progress this long reports `replan: true`."""


class Scenario(Spec):
    """A whole scenario file."""

    name: str | None = None
    """A short name."""
    description: str | None = None
    """One line saying what the scenario is (fleetsim examples shows it)."""
    simulation: SimulationSpec = Field(default_factory=SimulationSpec)  # type: ignore[valid-type]
    """SimulationParams fields, plus physics_dt and render_dt."""
    environment: EnvironmentSpec = Field(default_factory=EnvironmentSpec)
    """Static structure from model files."""
    site: SiteSpec | None = None
    """The navigation graph and its obstacles (robots can start on nodes and go_to them)."""
    robots: list[RobotSpec] = Field(default_factory=list)
    """Robots, one or a grid per entry."""
    objects: list[ObjectSpec] = Field(default_factory=list)
    """Objects: loads, racks, walls, one or a grid per entry."""
    plugins: list[PluginSpec] = Field(default_factory=list)
    """World plugins (not attached to a robot)."""
    rmf: RmfSpec | None = None
    """Open-RMF: map name, activities and blocking for `fleetsim rmf`."""
    faults: FaultsSpec | None = None
    """What goes wrong on purpose: robot faults, site faults, delays, a fixed schedule."""
    people: PeopleSpec | None = None
    """Pedestrians: groups who walk the site's graph between places."""


def json_schema() -> dict[str, Any]:
    """JSON Schema of the scenario format, for editor completion."""
    schema = Scenario.model_json_schema()
    specs = {cls.__name__: cls for cls in _subclasses(Spec)}
    _describe(schema, specs, {})
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fleetsim scenario"
    return schema


def attribute_docstrings(source: str) -> dict[str, dict[str, str]]:
    """{class: {field: docstring}} of the classes in a module's `source`: the string literal
    that follows an annotated class attribute (cleaned like `inspect.cleandoc`)."""
    found: dict[str, dict[str, str]] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        body, docs = node.body, found.setdefault(node.name, {})
        for field, after in itertools.pairwise(body):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[field.target.id] = inspect.cleandoc(after.value.value)
    return found


def _describe(
    node: Any, specs: dict[str, type[Spec]], docs: dict[str, dict[str, dict[str, str]]]
) -> None:
    """Give the properties of every model in a JSON Schema (`title`: a `Spec` class) their
    field docstrings as descriptions, where they have none (`docs`: by module, as read)."""
    if isinstance(node, list):
        for item in node:
            _describe(item, specs, docs)
    if not isinstance(node, dict):
        return
    model = specs.get(node.get("title", ""))
    properties = node.get("properties")
    if model is not None and isinstance(properties, dict):
        for name, field in model.model_fields.items():
            prop = properties.get(field.alias or name)
            text = _field_doc(model, name, docs)
            if isinstance(prop, dict) and text is not None and "description" not in prop:
                prop["description"] = text
    for value in node.values():
        _describe(value, specs, docs)


def _field_doc(
    model: type[Spec], name: str, docs: dict[str, dict[str, dict[str, str]]]
) -> str | None:
    """The docstring of field `name` where `model` or the nearest base class declares it."""
    for cls in model.__mro__:
        if not (isinstance(cls, type) and issubclass(cls, Spec)):
            continue
        if cls.__module__ not in docs:
            source = inspect.getsourcefile(cls)
            docs[cls.__module__] = attribute_docstrings(Path(source).read_text()) if source else {}
        text = docs[cls.__module__].get(cls.__name__, {}).get(name)
        if text is not None:
            return text
    return None


def _subclasses(cls: type[Spec]) -> list[type[Spec]]:
    """`cls` and every class made from it, at any depth."""
    return [cls, *(sub for direct in cls.__subclasses__() for sub in _subclasses(direct))]
