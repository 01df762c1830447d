"""Where each level of an Open-RMF building lies, as RMF's map generator works it out.

The reference level (`reference_level_name`, else the first) is scaled by its measurements:
metres per pixel is the mean of each measurement's distance over its length in pixels. Every
other level is placed on the reference through the fiducials the two share by name: a
similarity (rotation, scale, translation) whose rotation is the circular mean of how much the
bearing between each two fiducials turns, whose scale is the reference's divided by the mean
ratio of their distances, and whose translation brings the fiducials onto the reference's on
average. Image y points down, so pixel y is negated first. Lifts are placed with the
transform of their `reference_floor_name` level (else the reference level's).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Placement:
    """metres = R(rotation) @ (x, -y) * scale + (tx, ty), for pixel (x, y) of one level."""

    scale: float
    rotation: float = 0.0
    tx: float = 0.0
    ty: float = 0.0

    def apply(self, pixels: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2), image y down, to metres (N, 2)."""
        p = np.asarray(pixels, dtype=np.float64).reshape(-1, 2) * (1.0, -1.0)
        c, s = math.cos(self.rotation), math.sin(self.rotation)
        x = (c * p[:, 0] - s * p[:, 1]) * self.scale + self.tx
        y = (s * p[:, 0] + c * p[:, 1]) * self.scale + self.ty
        return np.column_stack((x, y))


def from_fiducials(
    reference: dict[str, tuple[float, float]],
    level: dict[str, tuple[float, float]],
    reference_scale: float,
) -> Placement | None:
    """The placement of a level on the reference level through their common fiducials
    (name -> pixel x, y); None when they share fewer than two."""
    names = [name for name in reference if name in level]
    if len(names) < 2:
        return None
    ref = {n: (float(reference[n][0]), -float(reference[n][1])) for n in names}
    own = {n: (float(level[n][0]), -float(level[n][1])) for n in names}
    turn_sin = turn_cos = ratio = 0.0
    pairs = list(itertools.combinations(names, 2))
    pairs = [(a, b) for a, b in pairs if _distance(ref[a], ref[b]) > 0]  # (not on one spot)
    if not pairs:
        return None
    for a, b in pairs:
        turn = _bearing(own[a], own[b]) - _bearing(ref[a], ref[b])
        turn_sin += math.sin(turn)
        turn_cos += math.cos(turn)
        ratio += _distance(own[a], own[b]) / _distance(ref[a], ref[b])
    rotation = -math.atan2(turn_sin, turn_cos)
    ratio /= len(pairs)
    c, s = math.cos(rotation), math.sin(rotation)
    # the level's fiducials turned and brought to the reference's size, against the reference's
    off_x = sum(ref[n][0] - (c * own[n][0] - s * own[n][1]) / ratio for n in names) / len(names)
    off_y = sum(ref[n][1] - (s * own[n][0] + c * own[n][1]) / ratio for n in names) / len(names)
    return Placement(
        reference_scale / ratio, rotation, off_x * reference_scale, off_y * reference_scale
    )


def _bearing(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.atan2(b[1] - a[1], b[0] - a[0])


def _distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(b[0] - a[0], b[1] - a[1])
