"""`SafetyFieldParams`: protective and warning fields as an AMR's safety scanner has them
(ISO 3691-4 style): convex polygons in the scanner's frame, in sets switched by the robot's
speed, each field a range of distances along every beam of the scanner.

An obstacle is in a field when a beam of the scanner's latest scan reads a distance inside the
field along that beam: the scanner's own readings decide, as on a real robot (a reading nearer
than the scanner's `range_min`, -inf, counts as in every field that reaches the scanner; a
dropout, NaN, as nothing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.sensors.lidar import LidarParams

Polygon = tuple[tuple[float, float], ...]


def _polygon(points: Any, what: str) -> Polygon:
    """`points` as a convex polygon (at least 3 corners, counter-clockwise or clockwise)."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a list of [x, y] corners, got {points!r}") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) < 3 or not np.isfinite(arr).all():
        raise ConfigError(f"{what} must be 3 or more finite [x, y] corners, got {points!r}")
    edges = np.roll(arr, -1, axis=0) - arr
    cross = (
        edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, 0)[:, 0]
    )
    if not ((cross > 0).all() or (cross < 0).all()):
        raise ConfigError(
            f"{what} must be convex, its corners in order round it (no three in a line): "
            f"split a concave field into convex ones or draw its convex hull"
        )
    return tuple((float(x), float(y)) for x, y in arr)


@dataclass(frozen=True)
class FieldSet:
    """The fields in force from `min_speed` (m/s) up to the next set's.

    Attributes:
        min_speed: the speed from which this set applies, m/s.
        protective: a convex polygon in the scanner's frame (x ahead, metres); an obstacle in
            it stops the robot. Empty: none.
        warning: likewise; an obstacle in it slows the robot. Empty: none.
    """

    min_speed: float
    protective: Polygon = ()
    warning: Polygon = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.min_speed) and self.min_speed >= 0):
            raise ConfigError(f"a field set's min_speed must be >= 0 m/s, got {self.min_speed!r}")
        for name in ("protective", "warning"):
            value = getattr(self, name)
            if len(value):
                object.__setattr__(self, name, _polygon(value, f"the {name} field"))
            else:
                object.__setattr__(self, name, ())


@dataclass(frozen=True)
class SafetyFieldParams:
    """A robot's safety fields, read from one of its lidars (its safety scanner).

    Attributes:
        sets: field sets by speed (`FieldSet`; the one with the highest `min_speed` at or below
            the robot's speed is in force).
        warning_speed: the fraction of its speed limits a robot drives at while an obstacle is
            in its warning field.
        resume_after: seconds the protective field must stay clear before a stopped robot
            drives on.
        scanner: which of the robot's lidars is its safety scanner (its index among
            `robot.lidars`).
    """

    sets: tuple[FieldSet, ...]
    warning_speed: float = 0.3
    resume_after: float = 0.5
    scanner: int = 0

    def __post_init__(self) -> None:
        sets = tuple(s if isinstance(s, FieldSet) else FieldSet(**s) for s in self.sets)
        if not sets:
            raise ConfigError("safety fields need at least one field set")
        speeds = [s.min_speed for s in sets]
        if speeds[0] != 0 or speeds != sorted(set(speeds)):
            raise ConfigError(
                f"field sets must start at min_speed 0 and rise, got {speeds}: the first set "
                "applies at rest"
            )
        object.__setattr__(self, "sets", sets)
        if not 0.0 <= self.warning_speed <= 1.0:
            raise ConfigError(f"warning_speed must be in [0, 1], got {self.warning_speed!r}")
        if not (math.isfinite(self.resume_after) and self.resume_after >= 0):
            raise ConfigError(f"resume_after must be >= 0 s, got {self.resume_after!r}")
        if not (isinstance(self.scanner, int) and self.scanner >= 0):
            raise ConfigError(f"scanner must be a lidar index >= 0, got {self.scanner!r}")

    @classmethod
    def for_footprint(
        cls,
        length: float,
        width: float,
        max_speed: float,
        deceleration: float,
        mount: Sequence[float] = (0.0, 0.0),
        speeds: int = 3,
        margin: float = 0.1,
        reaction: float = 0.2,
    ) -> SafetyFieldParams:
        """Rectangles ahead of a robot of `length` x `width` metres (its centre the base
        frame's origin, the scanner at `mount` (x, y) in it), one set per speed band: at each
        band's top speed the protective field reaches the stopping distance (reaction time,
        then braking at `deceleration`) plus `margin` past the robot's front, the warning field
        twice that. At rest the protective field is the footprint plus `margin` all round."""
        if not (length > 0 and width > 0 and max_speed > 0 and deceleration > 0 and speeds > 0):
            raise ConfigError("for_footprint needs length, width, max_speed, deceleration > 0")
        mx, my = float(mount[0]), float(mount[1])
        back, side = -length / 2 - margin - mx, width / 2 + margin
        sets = []
        for band in range(speeds + 1):
            top = max_speed * band / speeds
            stop = top * reaction + top * top / (2 * deceleration)
            front = length / 2 + margin + stop - mx
            ahead = length / 2 + margin + 2 * stop + (margin if band else 0) - mx
            protective = (
                (back, -side - my),
                (front, -side - my),
                (front, side - my),
                (back, side - my),
            )
            warning = (
                (back, -side - my),
                (ahead, -side - my),
                (ahead, side - my),
                (back, side - my),
            )
            low = 0.0 if band == 0 else max_speed * (band - 1) / speeds + 1e-6
            sets.append(FieldSet(low, protective, warning if band else ()))
        return cls(tuple(sets))


def beam_intervals(polygon: Polygon, lidar: LidarParams) -> np.ndarray:
    """For each beam of `lidar`, where along it the beam is inside `polygon` (in the scanner's
    frame): (beams, 2) near and far distances; (inf, -inf) where the beam misses it."""
    out = np.empty((lidar.beams, 2))
    out[:, 0], out[:, 1] = np.inf, -np.inf
    if not polygon:
        return out
    corners = np.asarray(polygon)
    angles = lidar.angle_min + lidar.angle_increment * np.arange(lidar.beams)
    d = np.stack((np.cos(angles), np.sin(angles)), axis=1)
    enter, leave = np.zeros(lidar.beams), np.full(lidar.beams, np.inf)
    centre = corners.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, b in zip(corners, np.roll(corners, -1, axis=0), strict=True):
            normal = np.array([b[1] - a[1], a[0] - b[0]])
            if normal @ (centre - a) > 0:
                normal = -normal  # outward
            # inside this edge's half-plane: normal . (t d - a) <= 0
            along = d @ normal
            limit = normal @ a
            t = limit / along
            enter = np.where(along < 0, np.maximum(enter, t), enter)
            leave = np.where(along > 0, np.minimum(leave, t), leave)
            outside = (along == 0) & (limit < 0)
            leave = np.where(outside, -np.inf, leave)
    hit = enter <= leave
    out[hit, 0], out[hit, 1] = enter[hit], leave[hit]
    return out
