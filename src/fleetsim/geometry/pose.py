"""`Pose`: an immutable position (metres) plus orientation quaternion (x, y, z, w)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.errors import ConfigError
from fleetsim.geometry import quat

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]


def _vec(values: ArrayLike, size: int, what: str) -> tuple[float, ...]:
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        arr = np.empty(0)
    if arr.shape != (size,) or not np.all(np.isfinite(arr)):
        raise ConfigError(f"{what} must be {size} finite numbers, got {values!r:.80}")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True, init=False)
class Pose:
    """A rigid transform: `position` (x, y, z) in metres and unit `orientation` (x, y, z, w).

    Poses are values: immutable, hashable, and compared exactly. Orientations are normalised on
    construction, and a non-finite or zero input raises ValueError.
    """

    position: Vec3
    orientation: Quat

    def __init__(
        self,
        position: ArrayLike = (0.0, 0.0, 0.0),
        orientation: ArrayLike = (0.0, 0.0, 0.0, 1.0),
    ) -> None:
        pos = _vec(position, 3, "position")
        q = _vec(orientation, 4, "orientation (x, y, z, w)")
        norm = math.sqrt(sum(c * c for c in q))
        if norm < 1e-12:
            raise ConfigError("orientation must be a non-zero quaternion (x, y, z, w)")
        object.__setattr__(self, "position", pos)
        object.__setattr__(self, "orientation", tuple(c / norm for c in q))

    @classmethod
    def unchecked(cls, position: Vec3, orientation: Quat) -> Pose:
        """A pose from values already known to be valid (finite, unit quaternion); no checks.

        For hot paths that read poses back from fleetsim's own arrays.
        """
        pose = object.__new__(cls)
        object.__setattr__(pose, "position", position)
        object.__setattr__(pose, "orientation", orientation)
        return pose

    @classmethod
    def from_xyz(cls, x: float, y: float, z: float = 0.0) -> Pose:
        """A pose at (x, y, z) with the identity orientation."""
        return cls((x, y, z))

    @classmethod
    def from_euler(
        cls, x: float, y: float, z: float, roll: float = 0.0, pitch: float = 0.0, yaw: float = 0.0
    ) -> Pose:
        """A pose at (x, y, z) with roll/pitch/yaw in radians (PyBullet's Euler convention)."""
        return cls((x, y, z), quat.from_euler(roll, pitch, yaw))

    @classmethod
    def from_yaw(cls, x: float, y: float, z: float, yaw: float) -> Pose:
        """A pose at (x, y, z) heading `yaw` radians about +z."""
        return cls((x, y, z), quat.from_yaw(yaw))

    @classmethod
    def from_pybullet(cls, position: Sequence[float], orientation: Sequence[float]) -> Pose:
        """From PyBullet's (position, orientation) pair, e.g. `getBasePositionAndOrientation`."""
        return cls(position, orientation)

    def to_pybullet(self) -> tuple[list[float], list[float]]:
        """As PyBullet's ([x, y, z], [qx, qy, qz, qw]) lists."""
        return list(self.position), list(self.orientation)

    @property
    def x(self) -> float:
        """The x coordinate, metres."""
        return self.position[0]

    @property
    def y(self) -> float:
        """The y coordinate, metres."""
        return self.position[1]

    @property
    def z(self) -> float:
        """The z coordinate, metres."""
        return self.position[2]

    @property
    def yaw(self) -> float:
        """Heading about +z, radians in [-pi, pi]."""
        return float(quat.yaw_of(self.orientation))

    @property
    def euler(self) -> Vec3:
        """(roll, pitch, yaw) in radians."""
        r, p, y = quat.to_euler(self.orientation)
        return float(r), float(p), float(y)

    def compose(self, other: Pose) -> Pose:
        """`self * other`: `other` expressed in this pose's frame, returned in the outer frame."""
        pos = np.add(self.position, quat.rotate(self.orientation, other.position))
        return Pose(pos, quat.multiply(self.orientation, other.orientation))

    def inverse(self) -> Pose:
        """The transform that undoes this one: `p.compose(p.inverse())` is the identity."""
        inv_q = quat.conjugate(self.orientation)
        return Pose(-quat.rotate(inv_q, self.position), inv_q)

    def transform_point(self, point: ArrayLike) -> Vec3:
        """A point given in this pose's frame, expressed in the outer frame."""
        p = np.add(self.position, quat.rotate(self.orientation, point))
        return float(p[0]), float(p[1]), float(p[2])

    def distance_to(self, other: Pose) -> float:
        """Euclidean distance between the positions, metres."""
        return math.dist(self.position, other.position)

    def isclose(self, other: Pose, pos_tol: float = 1e-6, angle_tol: float = 1e-6) -> bool:
        """Whether both poses are within `pos_tol` metres and `angle_tol` radians of each other."""
        rel = quat.multiply(quat.conjugate(self.orientation), other.orientation)
        angle = 2.0 * math.atan2(float(np.linalg.norm(rel[:3])), abs(float(rel[3])))
        return self.distance_to(other) <= pos_tol and angle <= angle_tol
