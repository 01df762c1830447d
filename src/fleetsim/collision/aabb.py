"""World-frame AABBs computed from pose arrays and each body's local box (no PyBullet calls)."""

from __future__ import annotations

import numpy as np

from fleetsim.geometry import quat
from fleetsim.state.bodies import BodyTable


def _rotate_rows(rot: np.ndarray, v: np.ndarray) -> np.ndarray:
    """rot (N, 3, 3) @ v (N, 3) per row; column-wise products beat einsum/matmul at this shape."""
    out: np.ndarray = rot[:, :, 0] * v[:, 0:1] + rot[:, :, 1] * v[:, 1:2] + rot[:, :, 2] * v[:, 2:3]
    return out


def world_aabbs(
    pos: np.ndarray, orn: np.ndarray, local_min: np.ndarray, local_max: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World (min, max), each (N, 3), of local boxes (N, 3) carried by poses (N, 3) / (N, 4).

    Exact for the rotated local box: centre rotated, half extents through |R|.
    """
    rot = quat.to_matrix(orn)
    world_centre = pos + _rotate_rows(rot, (local_min + local_max) * 0.5)
    np.abs(rot, out=rot)
    world_half = _rotate_rows(rot, (local_max - local_min) * 0.5)
    return world_centre - world_half, world_centre + world_half


def refresh_moved_aabbs(bodies: BodyTable) -> int:
    """Recompute world AABBs of rows marked moved, clear the mark; returns how many rows."""
    moved = bodies["moved"]
    rows = np.flatnonzero(moved)
    if rows.size == 0:
        return 0
    # When the whole fleet moved (the usual case), slices avoid gathering and scattering copies.
    sel: slice | np.ndarray = slice(None) if rows.size == moved.size else rows
    lo, hi = world_aabbs(
        bodies["pos"][sel],
        bodies["quat"][sel],
        bodies["aabb_local_min"][sel],
        bodies["aabb_local_max"][sel],
    )
    bodies["aabb_min"][sel] = lo
    bodies["aabb_max"][sel] = hi
    moved[sel] = False
    return int(rows.size)
