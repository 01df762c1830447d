"""A robot entry's `sensors:` (2-D lidars) and `safety_fields:` (protective and warning
fields read from one of them), as `fleetsim.sensors` takes them (see docs/guides/sensors.md)."""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from fleetsim.scenario.spec_base import Finite, NonNegative, Positive, Spec
from fleetsim.sensors import FieldSet, LidarParams, SafetyFieldParams


class LidarSpec(Spec):
    """A 2-D lidar on each robot of the entry; fields as `LidarParams` (left out: its
    defaults). A model that carries lidars of its own keeps them: these are added."""

    type: Literal["lidar"] = "lidar"
    """The kind of sensor (lidar: a planar range scanner)."""
    beams: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """How many beams a scan has."""
    fov: Annotated[float, Field(gt=0, le=2 * math.pi + 1e-9)] | None = None
    """Field of view in radians, centred on the sensor's x axis (6.283185: all round)."""
    range_min: NonNegative | None = None
    """Metres; a nearer hit reads -inf."""
    range_max: Positive | None = None
    """Metres; no hit within it reads +inf."""
    rate: Positive | None = None
    """Scans per simulated second."""
    mount: tuple[Finite, Finite, Finite, Finite] | None = None
    """[x, y, z, yaw] of the sensor on the robot's base, metres and radians."""
    noise_std: NonNegative | None = None
    """Gaussian range noise, metres."""
    dropout: Annotated[float, Field(ge=0, le=1)] | None = None
    """Chance a beam returns nothing (NaN)."""
    frame: str | None = None
    """The sensor's frame name."""

    def fields(self) -> dict[str, Any]:
        """The `LidarParams` fields given."""
        return {k: v for k, v in self.model_dump().items() if v is not None and k != "type"}

    @model_validator(mode="after")
    def _consistent(self) -> LidarSpec:
        LidarParams(**self.fields())  # (range_min < range_max, ...: named by the loader)
        return self


class FieldSetSpec(Spec):
    """The fields in force from `min_speed` up: convex polygons in the scanner's frame."""

    min_speed: NonNegative = 0.0
    """m/s: the set applies from this speed (the first set from 0)."""
    protective: list[tuple[Finite, Finite]] = Field(default_factory=list)
    """[[x, y], ...] corners (metres, x ahead of the scanner); an obstacle in it stops the robot."""
    warning: list[tuple[Finite, Finite]] = Field(default_factory=list)
    """Likewise; an obstacle in it slows the robot."""


class SafetyFieldsSpec(Spec):
    """Protective and warning fields read from one of the robot's lidars: `auto` (sized from
    the robot's footprint and speed limits) or `sets` of your own."""

    auto: bool = False
    """Rectangles ahead of the robot, growing with its speed (its first lidar's readings)."""
    sets: list[FieldSetSpec] = Field(default_factory=list)
    """Field sets by speed, the first from 0 m/s."""
    warning_speed: Annotated[float, Field(ge=0, le=1)] = 0.3
    """Fraction of its speed limits a robot keeps with an obstacle in its warning field."""
    resume_after: NonNegative = 0.5
    """Seconds a field must stay clear before the robot drives on (or at full speed)."""
    scanner: Annotated[int, Field(ge=0)] = 0
    """Which of the robot's lidars reads the fields (its index, model lidars first)."""

    @model_validator(mode="after")
    def _one_way(self) -> SafetyFieldsSpec:
        if self.auto == bool(self.sets):
            raise ValueError("give either auto: true or sets (field sets by speed), not both")
        if self.sets:
            self.params()  # (convex polygons, rising speeds: named by the loader)
        else:
            SafetyFieldParams((FieldSet(0.0),), self.warning_speed, self.resume_after)
        return self

    def params(self, auto: SafetyFieldParams | None = None) -> SafetyFieldParams:
        """What `Agent.set_safety_fields` takes (`auto`: the robot's `auto_safety_fields`)."""
        if self.auto:
            assert auto is not None
            return dataclasses.replace(
                auto, warning_speed=self.warning_speed, resume_after=self.resume_after
            )
        sets = tuple(
            FieldSet(s.min_speed, tuple(s.protective), tuple(s.warning)) for s in self.sets
        )
        return SafetyFieldParams(sets, self.warning_speed, self.resume_after, self.scanner)
