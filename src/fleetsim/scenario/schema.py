"""The scenario file format, as pydantic models (unknown keys are rejected everywhere).

Top level: `simulation` (SimulationParams fields plus `physics_dt`, `render_dt`), `environment`
(model files with poses), `robots`, `objects`, `plugins` (world plugins). Fields left out keep the
defaults of the classes they configure (SimulationParams, AgentSpawnParams, ShapeParams).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Annotated, Any, Literal

import numpy as np
import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetsim.core import SimulationParams

Finite = Annotated[float, Field(allow_inf_nan=False)]
Vec3 = tuple[Finite, Finite, Finite]
Quat = tuple[Finite, Finite, Finite, Finite]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
CollisionModeName = Literal["normal_3d", "normal_2d", "static", "disabled"]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoseSpec(Spec):
    """A pose: `[x, y, z]`, `[x, y, z, yaw]`, or {position, yaw} / {position, orientation}."""

    position: Vec3
    yaw: Finite = 0.0
    orientation: Quat | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) in (3, 4):
            return {"position": value[:3], "yaw": value[3] if len(value) == 4 else 0.0}
        return value


class GridSpec(Spec):
    """`count` items on a grid from `origin`, `spacing` metres apart, `columns` per row.

    `spacing` is one number, `[dx, dy]` or `[dx, dy, dz]`; with `rows` as well, items beyond
    `columns` x `rows` go on further layers, `dz` higher each.
    """

    count: Annotated[int, Field(gt=0, description="How many items.")]
    spacing: Positive | tuple[Positive, Positive] | tuple[Positive, Positive, Positive] = Field(
        1.0, description="Metres between items: d, [dx, dy] or [dx, dy, dz]."
    )
    origin: Vec3 = Field((0.0, 0.0, 0.0), description="Position of the first item [x, y, z] (m).")
    columns: Annotated[int, Field(gt=0)] | None = Field(
        None, description="Items per row (along x); default ceil(sqrt(count))."
    )
    rows: Annotated[int, Field(gt=0)] | None = Field(
        None, description="Rows per layer (along y); more items stack in layers dz apart."
    )
    yaw: Finite = Field(0.0, description="Heading of every item (radians).")

    def positions(self) -> np.ndarray:
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
    class_: str | None = Field(None, alias="class")
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_of(self) -> PluginSpec:
        if (self.type is None) == (self.class_ is None):
            raise ValueError(
                "give exactly one of 'type' (a registered name) or 'class' (module.Class)"
            )
        return self


JointTargets = list[Finite] | dict[str, Finite]


class MoveToSpec(Spec):
    type: Literal["move_to"]
    pose: PoseSpec | None = None
    path: list[PoseSpec] | None = None
    tolerance: NonNegative = 0.01
    align_orientation: bool = True

    @model_validator(mode="after")
    def _target(self) -> MoveToSpec:
        if (self.pose is None) == (self.path is None):
            raise ValueError("move_to needs exactly one of 'pose' or 'path'")
        return self


class WaitSpec(Spec):
    type: Literal["wait"]
    duration: NonNegative


class PickSpec(Spec):
    type: Literal["pick"]
    object: str | None = None
    position: Vec3 | None = None
    search_radius: Positive = 0.5
    attach_link: int | str | None = None
    use_approach: bool = True
    approach_offset: NonNegative = 1.0
    joint_targets: JointTargets | None = None
    ee_target_position: Vec3 | None = None
    continue_on_ik_failure: bool = True
    reach: NonNegative = 0.3
    stand_offset: NonNegative = 0.0


class DropSpec(Spec):
    type: Literal["drop"]
    pose: PoseSpec | None = None
    relative_pose: PoseSpec | None = None
    object: str | None = None
    place_gently: bool = True
    use_approach: bool = True
    approach_offset: NonNegative = 1.0
    drop_offset: NonNegative = 0.0
    joint_targets: JointTargets | None = None
    ee_target_position: Vec3 | None = None
    continue_on_ik_failure: bool = True
    reach: NonNegative = 0.3


class JointsSpec(Spec):
    type: Literal["joints"]
    targets: JointTargets
    tolerance: NonNegative | None = None
    max_force: Positive = 500.0


class ReachSpec(Spec):
    type: Literal["reach"]
    position: Vec3
    orientation: Quat | None = None
    tolerance: Positive = 0.02


ActionSpec = Annotated[
    MoveToSpec | WaitSpec | PickSpec | DropSpec | JointsSpec | ReachSpec,
    Field(discriminator="type"),
]


class RobotSpec(Spec):
    """One robot (`pose`) or a grid of identical robots (`grid`)."""

    name: str | None = None
    model: str
    pose: PoseSpec | None = None
    grid: GridSpec | None = None
    motion_mode: str | None = Field(
        None,
        description='"omnidirectional", "differential", a registered motion model, or '
        '"module:attribute" naming your own (see fleetsim.control.models).',
    )
    max_linear_vel: Positive | None = None
    max_linear_accel: Positive | None = None
    max_angular_vel: Positive | None = None
    max_angular_accel: Positive | None = None
    use_fixed_base: bool | None = None
    mass: NonNegative | None = None
    collision_mode: CollisionModeName | None = None
    pickable: bool | None = None
    joint_tolerance: NonNegative | list[NonNegative] | dict[str, NonNegative] | None = None
    plugins: list[PluginSpec] = Field(default_factory=list)
    actions: list[ActionSpec] = Field(default_factory=list)
    repeat: bool | Annotated[int, Field(ge=0)] = False

    @model_validator(mode="after")
    def _placement(self) -> RobotSpec:
        if self.pose is not None and self.grid is not None:
            raise ValueError("give 'pose' or 'grid', not both")
        return self


class ShapeSpec(Spec):
    type: Literal["box", "sphere", "cylinder", "mesh"] = "box"
    half_extents: Vec3 | None = None
    radius: Positive | None = None
    height: Positive | None = None
    mesh: str | None = None
    scale: Vec3 | None = None
    color: Quat | None = None


class ObjectSpec(Spec):
    """A box, sphere, cylinder or mesh (`pose`), or a grid of them (`grid`)."""

    name: str | None = None
    shape: ShapeSpec = Field(default_factory=ShapeSpec)
    pose: PoseSpec | None = None
    grid: GridSpec | None = None
    pickable: bool = False
    static: bool = False
    mass: NonNegative | None = None
    collision_mode: CollisionModeName | None = None

    @model_validator(mode="after")
    def _placement(self) -> ObjectSpec:
        if self.pose is not None and self.grid is not None:
            raise ValueError("give 'pose' or 'grid', not both")
        return self


class EnvironmentFileSpec(Spec):
    """A URDF, SDF or mesh file placed in the world (static structure by default)."""

    path: str
    pose: PoseSpec | None = None
    fixed: bool = True
    static: bool = True
    scale: Positive = 1.0


class EnvironmentSpec(Spec):
    files: list[EnvironmentFileSpec] = Field(default_factory=list)


def _simulation_section() -> type[BaseModel]:
    """SimulationParams' fields (same types, rules and defaults) plus physics_dt and render_dt."""
    hints = typing.get_type_hints(SimulationParams, include_extras=True)
    fields: dict[str, Any] = {
        f.name: (hints[f.name], f.default) for f in dataclasses.fields(SimulationParams)
    }
    fields["physics_dt"] = (Positive | None, None)
    fields["render_dt"] = (Positive | None, None)
    model: type[BaseModel] = pydantic.create_model(
        "SimulationSpec", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


SimulationSpec = _simulation_section()


class Scenario(Spec):
    """A whole scenario file."""

    name: str | None = None
    description: str | None = None
    simulation: SimulationSpec = Field(default_factory=SimulationSpec)  # type: ignore[valid-type]
    environment: EnvironmentSpec = Field(default_factory=EnvironmentSpec)
    robots: list[RobotSpec] = Field(default_factory=list)
    objects: list[ObjectSpec] = Field(default_factory=list)
    plugins: list[PluginSpec] = Field(default_factory=list)


def json_schema() -> dict[str, Any]:
    """JSON Schema of the scenario format, for editor completion."""
    schema = Scenario.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fleetsim scenario"
    return schema
