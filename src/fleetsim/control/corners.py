"""Which waypoints of a path are corners: those a robot must slow down or turn at."""

from __future__ import annotations

import numpy as np


def corners(positions: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Mask (N,) of the waypoints that matter: a waypoint on the straight segment between its
    neighbours, with the same speed limit on both sides, changes nothing and is driven through
    as part of one leg (so a dense straight path is as fast as its two ends)."""
    keep = np.ones(len(positions), dtype=bool)
    if len(positions) < 3:
        return keep
    b = positions[1:-1] - positions[:-2]
    a = positions[2:] - positions[1:-1]
    # |b x a| and |b||a| written out: np.cross costs more than the rest of this on short paths
    cx = b[:, 1] * a[:, 2] - b[:, 2] * a[:, 1]
    cy = b[:, 2] * a[:, 0] - b[:, 0] * a[:, 2]
    cz = b[:, 0] * a[:, 1] - b[:, 1] * a[:, 0]
    cross2 = cx * cx + cy * cy + cz * cz
    scale2 = (b * b).sum(axis=1) * (a * a).sum(axis=1)
    straight = (cross2 <= 1e-24 * np.maximum(scale2, 1e-300)) & ((b * a).sum(axis=1) > 0)
    keep[1:-1] = ~(straight & (limits[1:-1] == limits[2:]))
    return keep
