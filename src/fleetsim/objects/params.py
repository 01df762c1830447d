"""`SimObjectSpawnParams`: everything needed to create one `SimObject`, validated up front."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose, ShapeParams
from fleetsim.state import CollisionMode


def collision_mode_of(value: CollisionMode | str | int) -> CollisionMode:
    """A `CollisionMode` from the enum, its name ("normal_2d", "STATIC") or its value."""
    if isinstance(value, CollisionMode):
        return value
    if isinstance(value, str):
        try:
            return CollisionMode[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, int):
        try:
            return CollisionMode(value)
        except ValueError:
            pass
    names = ", ".join(m.name for m in CollisionMode)
    raise ConfigError(f"unknown collision mode {value!r}: use one of {names}")


@dataclass(frozen=True)
class SimObjectSpawnParams:
    """Parameters for `SimObject.from_params`.

    Attributes:
        visual_shape: what the object looks like; defaults to the collision shape.
        collision_shape: what it collides as; defaults to the visual shape.
        initial_pose: where it appears.
        mass: kilograms; 0 makes it kinematic. With physics on, mass > 0 makes it dynamic.
        pickable: whether Pick actions may take it; by default True, except for STATIC
            bodies (structure), which are pickable only when asked.
        collision_mode: a `CollisionMode` (or its name).
        name: a label for logs and lookups; defaults to "object_<handle>".
        user_data: anything the application wants to keep with the object.
    """

    visual_shape: ShapeParams | None = None
    collision_shape: ShapeParams | None = None
    initial_pose: Pose = field(default_factory=Pose)
    mass: float = 0.0
    pickable: bool | None = None
    collision_mode: CollisionMode = CollisionMode.NORMAL_3D
    name: str | None = None
    user_data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.visual_shape is None and self.collision_shape is None:
            raise ConfigError(
                "SimObjectSpawnParams needs visual_shape or collision_shape (a ShapeParams)"
            )
        for name in ("visual_shape", "collision_shape"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, ShapeParams):
                raise ConfigError(
                    f"SimObjectSpawnParams.{name} must be a ShapeParams, got {value!r}"
                )
        if not isinstance(self.initial_pose, Pose):
            raise ConfigError(
                "initial_pose must be a Pose (e.g. Pose.from_xyz(1, 2, 0)), "
                f"got {self.initial_pose!r}"
            )
        if not (isinstance(self.mass, int | float) and math.isfinite(self.mass) and self.mass >= 0):
            raise ConfigError(f"mass must be a finite number >= 0 kg, got {self.mass!r}")
        object.__setattr__(self, "collision_mode", collision_mode_of(self.collision_mode))
        if self.pickable is None:
            object.__setattr__(self, "pickable", self.collision_mode != CollisionMode.STATIC)
        elif not isinstance(self.pickable, bool | np.bool_):
            raise ConfigError(f"pickable must be True or False, got {self.pickable!r}")

    @property
    def shapes(self) -> tuple[ShapeParams, ShapeParams]:
        """(visual, collision), each falling back to the other when missing."""
        visual = self.visual_shape or self.collision_shape
        collision = self.collision_shape or self.visual_shape
        assert visual is not None and collision is not None  # guaranteed by __post_init__
        return visual, collision
