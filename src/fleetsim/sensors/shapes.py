"""`RayShapes`: what a ray can hit, one shape per body, from the body table.

A body is hit as one of three primitives, in the world frame:

- a **box** (any orientation): the body's local box under its pose. Exact for a box body; a
  robot is its footprint box (as the collision check's footprints); any other body (a mesh, an
  articulated model) is its local bounding box.
- a **sphere**: a body made from a sphere `ShapeParams`.
- an **upright cylinder**: a body made from a cylinder `ShapeParams` whose axis is vertical in
  the world; a tilted one is its box.

Bodies whose collisions are DISABLED (open doors among them) are not seen, nor bodies whose box
is not finite (a ground plane, which a level beam never meets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fleetsim.geometry import ShapeParams, quat
from fleetsim.state import BodyTable, CollisionMode

IntArray = np.ndarray
FloatArray = np.ndarray

BOX, SPHERE, CYLINDER = 0, 1, 2
"""Shape kinds (the body table's `ray_shape` column holds the kind the body was made as)."""

_VERTICAL = 1e-9  # a cylinder whose axis leans by more than this (its z component) is a box


def ray_shape_of(shape: ShapeParams) -> int:
    """The kind a body made of `shape` is hit as: a sphere, a cylinder along the body's z axis,
    else its box."""
    if shape.shape_type == "sphere":
        return SPHERE
    if shape.shape_type == "cylinder" and tuple(shape.frame_orientation) == (0.0, 0.0, 0.0, 1.0):
        return CYLINDER
    return BOX


@dataclass(frozen=True)
class RayShapes:
    """The shapes of the bodies a ray can hit, one row each (M rows).

    Attributes:
        handles: body handles (M,).
        parents: handles of the bodies they are attached to, -1 for none (M,).
        kind: `BOX`, `SPHERE` or `CYLINDER` (M,) int8.
        centre: shape centres, world frame (M, 3).
        rot: world-from-shape rotation matrices, row-major (M, 9).
        half: half extents (box), radius (sphere: all three; cylinder: x and y) and half
            height (cylinder: z) (M, 3).
        lo: world box lower corners (M, 3).
        hi: world box upper corners (M, 3).
    """

    handles: IntArray
    parents: IntArray
    kind: np.ndarray
    centre: FloatArray
    rot: FloatArray
    half: FloatArray
    lo: FloatArray
    hi: FloatArray

    def __len__(self) -> int:
        return len(self.handles)


def ray_shapes(bodies: BodyTable) -> RayShapes:
    """The shapes of every body a ray can see, from the table's poses and local boxes."""
    mode = bodies["collision_mode"]
    lo, hi = bodies["aabb_min"], bodies["aabb_max"]
    seen = (mode != int(CollisionMode.DISABLED)) & np.isfinite(lo).all(1) & np.isfinite(hi).all(1)
    rows = np.flatnonzero(seen)
    rot = quat.to_matrix(bodies["quat"][rows])
    local_lo, local_hi = bodies["aabb_local_min"][rows], bodies["aabb_local_max"][rows]
    middle = (local_lo + local_hi) * 0.5
    centre = bodies["pos"][rows] + np.einsum("mij,mj->mi", rot, middle)
    kind = bodies["ray_shape"][rows].astype(np.int8)
    leaning = (kind == CYLINDER) & (np.abs(rot[:, 2, 2]) < 1.0 - _VERTICAL)
    kind[leaning] = BOX
    return RayShapes(
        handles=bodies.handles[rows],
        parents=bodies["parent"][rows],
        kind=kind,
        centre=centre,
        rot=np.ascontiguousarray(rot.reshape(-1, 9)),
        half=(local_hi - local_lo) * 0.5,
        lo=lo[rows],
        hi=hi[rows],
    )


def cylinders(
    handles: IntArray, xy: FloatArray, radii: FloatArray, floor: float | FloatArray, height: float
) -> RayShapes:
    """Upright cylinders standing on `floor` (m; one, or one each), `height` tall, at `xy`
    (M, 2) with `radii`: things a ray can hit that are not bodies (people); `handles` must
    not be any body's."""
    m = len(xy)
    centre = np.column_stack((xy, np.full(m, floor + height / 2)))
    half = np.column_stack((radii, radii, np.full(m, height / 2)))
    return RayShapes(
        handles=np.asarray(handles, dtype=np.int64),
        parents=np.full(m, -1, dtype=np.int64),
        kind=np.full(m, CYLINDER, dtype=np.int8),
        centre=centre,
        rot=np.tile(np.eye(3).ravel(), (m, 1)),
        half=half,
        lo=centre - half,
        hi=centre + half,
    )


def joined(a: RayShapes, b: RayShapes) -> RayShapes:
    """The shapes of `a` and then of `b`."""
    return RayShapes(*(np.concatenate((getattr(a, f), getattr(b, f))) for f in (
        "handles", "parents", "kind", "centre", "rot", "half", "lo", "hi")))  # fmt: skip
