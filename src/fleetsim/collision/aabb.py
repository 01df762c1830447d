"""World-frame AABBs computed from pose arrays and each body's local box (no PyBullet calls)."""

from __future__ import annotations

import numpy as np

from fleetsim import jit
from fleetsim.collision import kernels
from fleetsim.geometry import quat
from fleetsim.state.bodies import BodyTable
from fleetsim.state.table import rows_of


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
    rows = moved.nonzero()[0]
    if rows.size == 0:
        return 0
    columns = ("pos", "quat", "aabb_local_min", "aabb_local_max")
    if (
        rows.size >= kernels.MIN_BODIES
        and jit.worth_loading(rows.size)
        and kernels.refresh_boxes(
            rows, *(bodies[name] for name in (*columns, "aabb_min", "aabb_max"))
        )
    ):
        pass  # a large fleet: compiled, in place
    elif rows.size == moved.size:  # the whole fleet moved: slices, no gathered copies
        lo, hi = world_aabbs(*(bodies[name] for name in columns))
        bodies["aabb_min"][:], bodies["aabb_max"][:] = lo, hi
    else:
        lo, hi = world_aabbs(*(rows_of(bodies[name], rows) for name in columns))
        bodies["aabb_min"][rows], bodies["aabb_max"][rows] = lo, hi
    moved[rows] = False
    bodies.version += 1  # boxes changed: the next collision check cannot reuse the last one
    return int(rows.size)
