"""World-frame AABBs computed from pose arrays and each body's local box (no PyBullet calls)."""

from __future__ import annotations

import numpy as np

from fleetsim.geometry import quat
from fleetsim.state.bodies import BodyTable


def world_aabbs(
    pos: np.ndarray, orn: np.ndarray, local_min: np.ndarray, local_max: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World (min, max), each (N, 3), of local boxes (N, 3) carried by poses (N, 3) / (N, 4).

    Exact for the rotated local box: centre rotated, half extents through |R|.
    """
    rot = quat.to_matrix(orn)
    centre = (local_min + local_max) * 0.5
    half = (local_max - local_min) * 0.5
    world_centre = pos + np.einsum("nij,nj->ni", rot, centre)
    world_half = np.einsum("nij,nj->ni", np.abs(rot), half)
    return world_centre - world_half, world_centre + world_half


def refresh_moved_aabbs(bodies: BodyTable) -> int:
    """Recompute world AABBs of rows marked moved, clear the mark; returns how many rows."""
    rows = np.flatnonzero(bodies["moved"])
    if rows.size:
        lo, hi = world_aabbs(
            bodies["pos"][rows],
            bodies["quat"][rows],
            bodies["aabb_local_min"][rows],
            bodies["aabb_local_max"][rows],
        )
        bodies["aabb_min"][rows] = lo
        bodies["aabb_max"][rows] = hi
        bodies["moved"][rows] = False
    return int(rows.size)
