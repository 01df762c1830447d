"""`ShapeParams`: a validated, hashable description of a box, sphere, cylinder or mesh shape."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path as FsPath
from typing import Any, Literal

import numpy as np

from fleetsim.assets import check_mesh
from fleetsim.errors import AssetNotFoundError, ConfigError, unknown_key_message
from fleetsim.geometry import quat

ShapeType = Literal["box", "sphere", "cylinder", "mesh"]
SHAPE_TYPES: tuple[str, ...] = ("box", "sphere", "cylinder", "mesh")


def _floats(value: Any, size: int, name: str) -> tuple[float, ...]:
    try:
        arr = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ConfigError(f"ShapeParams.{name} must be {size} numbers, got {value!r}") from None
    if arr.shape != (size,) or not np.all(np.isfinite(arr)):
        raise ConfigError(f"ShapeParams.{name} must be {size} finite numbers, got {value!r}")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True)
class ShapeParams:
    """A visual or collision shape. Sequences are stored as tuples, so shapes are hashable.

    Attributes:
        shape_type: "box", "sphere", "cylinder" or "mesh".
        half_extents: box half sizes (x, y, z), metres.
        radius: sphere or cylinder radius, metres.
        height: cylinder length along its local z axis, metres.
        mesh_path: mesh file (.obj, .stl, .dae) for "mesh"; must exist.
        mesh_scale: per-axis mesh scale.
        rgba_color: colour (r, g, b, a), each in [0, 1].
        frame_position: offset of the shape from the body frame, metres.
        frame_orientation: rotation (x, y, z, w) of the shape in the body frame.
    """

    shape_type: ShapeType = "box"
    half_extents: Sequence[float] = (0.5, 0.5, 0.5)
    radius: float = 0.5
    height: float = 1.0
    mesh_path: str | None = None
    mesh_scale: Sequence[float] = (1.0, 1.0, 1.0)
    rgba_color: Sequence[float] = (0.7, 0.7, 0.7, 1.0)
    frame_position: Sequence[float] = (0.0, 0.0, 0.0)
    frame_orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        if self.shape_type not in SHAPE_TYPES:
            raise ConfigError(
                f"unknown shape_type {self.shape_type!r}: use one of {', '.join(SHAPE_TYPES)}"
            )
        set_ = object.__setattr__
        for name, size in (
            ("half_extents", 3),
            ("mesh_scale", 3),
            ("rgba_color", 4),
            ("frame_position", 3),
            ("frame_orientation", 4),
        ):
            set_(self, name, _floats(getattr(self, name), size, name))
        set_(
            self,
            "frame_orientation",
            tuple(float(v) for v in quat.normalize(self.frame_orientation)),
        )
        for name in ("radius", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise ConfigError(f"{name} must be a number in metres, got {value!r:.80}")
            if not math.isfinite(value):
                raise ConfigError(f"{name} must be finite, got {value}")
            set_(self, name, float(value))
        if self.shape_type == "box" and min(self.half_extents) <= 0:
            raise ConfigError(f"box half_extents must be positive, got {self.half_extents}")
        if self.shape_type in ("sphere", "cylinder") and self.radius <= 0:
            raise ConfigError(f"{self.shape_type} radius must be positive, got {self.radius}")
        if self.shape_type == "cylinder" and self.height <= 0:
            raise ConfigError(f"cylinder height must be positive, got {self.height}")
        if self.shape_type == "mesh":
            self._check_mesh()

    def _check_mesh(self) -> None:
        if not self.mesh_path:
            raise ConfigError("shape_type 'mesh' needs mesh_path (an .obj, .stl or .dae file)")
        path = FsPath(self.mesh_path).expanduser()
        if not path.is_file():
            raise AssetNotFoundError(
                f"mesh file not found: {self.mesh_path} (resolved to {path.absolute()})"
            )
        check_mesh(path)  # PyBullet would crash the process on some broken meshes
        object.__setattr__(self, "mesh_path", str(path.resolve()))

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "shape") -> ShapeParams:
        """From a mapping such as a YAML block; unknown keys are an error naming the closest one."""
        valid = {f.name for f in fields(cls)}
        for key in data:
            if key not in valid:
                raise ConfigError(unknown_key_message(key, valid, where))
        return cls(**data)

    def local_aabb(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The tight (min, max) box around the shape in the body frame, or None for meshes.

        Rotation by `frame_orientation` is exact for boxes, spheres and cylinders.
        """
        offset = np.asarray(self.frame_position)
        rot = quat.to_matrix(self.frame_orientation)
        if self.shape_type == "box":
            half = np.abs(rot) @ np.asarray(self.half_extents)
        elif self.shape_type == "sphere":
            half = np.full(3, self.radius)
        elif self.shape_type == "cylinder":
            axis = rot[:, 2]
            half = self.radius * np.sqrt(
                np.clip(1.0 - axis**2, 0.0, 1.0)
            ) + self.height / 2 * np.abs(axis)
        else:
            return None
        return offset - half, offset + half
