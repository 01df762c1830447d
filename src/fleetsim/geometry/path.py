"""`Path`: an ordered list of waypoint poses, with helpers for common shapes."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.errors import ConfigError
from fleetsim.geometry import quat
from fleetsim.geometry.pose import Pose


@dataclass(frozen=True)
class Path:
    """Waypoints a robot visits in order. Closed shapes repeat their first waypoint at the end."""

    waypoints: tuple[Pose, ...]

    def __init__(self, waypoints: Sequence[Pose]) -> None:
        if len(waypoints) == 0:
            raise ConfigError("a Path needs at least one waypoint")
        if not all(isinstance(w, Pose) for w in waypoints):
            raise ConfigError(
                "Path waypoints must be Pose objects; use Path.from_positions for xyz"
            )
        object.__setattr__(self, "waypoints", tuple(waypoints))

    @classmethod
    def from_positions(cls, positions: ArrayLike, face_forward: bool = True) -> Path:
        """A path through (N, 3) positions, or (N, 2) with z = 0.

        With `face_forward`, each waypoint's yaw points along the segment leaving it (the last one
        keeps the heading of the segment arriving at it); otherwise orientations are identity.
        """
        pts = np.asarray(positions, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3) or len(pts) == 0:
            raise ConfigError(f"positions must have shape (N, 2) or (N, 3), got {pts.shape}")
        if not np.all(np.isfinite(pts)):
            raise ConfigError("positions must be finite")
        if pts.shape[1] == 2:
            pts = np.column_stack((pts, np.zeros(len(pts))))
        yaws = np.zeros(len(pts))
        if face_forward and len(pts) > 1:
            d = np.diff(pts[:, :2], axis=0)
            seg_yaw = np.arctan2(d[:, 1], d[:, 0])
            yaws = np.append(seg_yaw, seg_yaw[-1])
        quats = quat.from_yaw(yaws)
        return cls([Pose(p, q) for p, q in zip(pts, quats, strict=True)])

    @classmethod
    def rectangle(
        cls, center: ArrayLike, width: float, height: float, z: float | None = None
    ) -> Path:
        """A closed counter-clockwise rectangle: `width` along x, `height` along y, metres."""
        if width <= 0 or height <= 0:
            raise ConfigError("rectangle width and height must be positive")
        c = np.asarray(center, dtype=np.float64).reshape(-1)
        cz = float(z if z is not None else (c[2] if len(c) > 2 else 0.0))
        hw, hh = width / 2, height / 2
        corners = [(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh), (-hw, -hh)]
        return cls.from_positions([(c[0] + dx, c[1] + dy, cz) for dx, dy in corners])

    @classmethod
    def circle(
        cls, center: ArrayLike, radius: float, num_points: int = 16, z: float | None = None
    ) -> Path:
        """A closed counter-clockwise circle approximated by `num_points` waypoints."""
        if radius <= 0 or num_points < 3:
            raise ConfigError("circle needs radius > 0 and num_points >= 3")
        c = np.asarray(center, dtype=np.float64).reshape(-1)
        cz = float(z if z is not None else (c[2] if len(c) > 2 else 0.0))
        angles = np.linspace(0.0, 2 * math.pi, num_points + 1)
        pts = np.column_stack(
            (
                c[0] + radius * np.cos(angles),
                c[1] + radius * np.sin(angles),
                np.full_like(angles, cz),
            )
        )
        pts[-1] = pts[0]
        return cls.from_positions(pts)

    @property
    def positions(self) -> np.ndarray:
        """Waypoint positions, shape (N, 3)."""
        return np.array([w.position for w in self.waypoints])

    @property
    def length(self) -> float:
        """Total length of the straight segments between waypoints, metres."""
        return float(np.linalg.norm(np.diff(self.positions, axis=0), axis=1).sum())

    def __len__(self) -> int:
        return len(self.waypoints)

    def __iter__(self) -> Iterator[Pose]:
        return iter(self.waypoints)

    def __getitem__(self, index: int) -> Pose:
        return self.waypoints[index]
