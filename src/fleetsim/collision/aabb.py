"""World-frame AABBs computed from pose arrays and each body's local box (no PyBullet calls)."""

from __future__ import annotations

import numpy as np

from fleetsim import jit
from fleetsim.collision import kernels
from fleetsim.geometry import quat
from fleetsim.geometry.vectors import any_set
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
    offset, half = turned_boxes(orn, local_min, local_max)
    world_centre = pos + offset
    return world_centre - half, world_centre + half


def turned_boxes(
    orn: np.ndarray, local_min: np.ndarray, local_max: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The box centre's offset from the body origin and the half extents, each (N, 3), of
    local boxes turned by `orn` (N, 4): the part of `world_aabbs` the position does not enter."""
    rot = quat.to_matrix(orn)
    offset = _rotate_rows(rot, (local_min + local_max) * 0.5)
    np.abs(rot, out=rot)
    return offset, _rotate_rows(rot, (local_max - local_min) * 0.5)


def refresh_moved_aabbs(bodies: BodyTable) -> int:
    """Recompute world AABBs of rows marked moved, clear the mark; returns how many rows."""
    moved = bodies["moved"]
    rows = moved.nonzero()[0]
    if rows.size == 0:
        return 0
    b = bodies.views()
    if (
        (rows.size >= kernels.MIN_BODIES or jit.eager())
        and jit.worth_loading(rows.size)
        and kernels.refresh_boxes(
            rows,
            b["pos"],
            b["quat"],
            b["aabb_local_min"],
            b["aabb_local_max"],
            b["aabb_min"],
            b["aabb_max"],
            moved,
            b["unchecked"],
            b["level_kind"],
            b["level_box"],
        )
    ):
        pass  # a large fleet: compiled, in place (turned boxes kept stay right for their quat)
    else:
        if rows.size == moved.size:  # the whole fleet moved: slices, no gathered copies
            lo, hi = _boxes(bodies, slice(None))
            bodies["aabb_min"][:], bodies["aabb_max"][:] = lo, hi
        else:
            lo, hi = _boxes(bodies, rows)
            bodies["aabb_min"][rows], bodies["aabb_max"][rows] = lo, hi
        moved[rows] = False
        bodies["unchecked"][rows] = True
        bodies["level_kind"][rows] = -1  # (the narrow phase works these boxes out itself)
    bodies.version += 1  # boxes changed: the next collision check cannot reuse the last one
    return int(rows.size)


def _boxes(bodies: BodyTable, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
    """World boxes of `rows` (an index array or every row). A body whose orientation is the
    one its turned box was made for (a robot driving without turning) reuses that box: the
    same numbers as `world_aabbs`, without a rotation per row; the others get theirs anew."""

    def column(name: str) -> np.ndarray:
        c = bodies[name]
        return c if isinstance(rows, slice) else c.take(rows, axis=0)

    orn = column("quat")
    stale = ~(orn == column("box_quat")).all(axis=1)  # (NaN: never made)
    if any_set(stale):
        at = stale.nonzero()[0]
        turned = at if isinstance(rows, slice) else rows[at]
        offset, half = turned_boxes(
            orn[at], bodies["aabb_local_min"][turned], bodies["aabb_local_max"][turned]
        )
        bodies["box_quat"][turned], bodies["box_offset"][turned] = orn[at], offset
        bodies["box_half"][turned] = half
    half = column("box_half")
    centre = column("pos") + column("box_offset")
    return centre - half, centre + half
