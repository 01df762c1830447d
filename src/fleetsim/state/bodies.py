"""The body table: one row per simulated body, and the `CollisionMode` each row carries."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from fleetsim.state.table import Column, Table


class CollisionMode(IntEnum):
    """How a body takes part in collision checks."""

    NORMAL_3D = 0
    """Tested in full 3-D against every other body."""
    NORMAL_2D = 1
    """Tested on x and y only: height is ignored (floor robots of different heights)."""
    STATIC = 2
    """Never moves; tested only against bodies that move."""
    DISABLED = 3
    """Never tested."""


BODY_COLUMNS: dict[str, Column] = {
    # Kinematic state, world frame.
    "pos": Column(np.float64, (3,)),
    "quat": Column(np.float64, (4,), (0.0, 0.0, 0.0, 1.0)),
    # Tight box around the body in its own frame, and the world box derived from the pose.
    "aabb_local_min": Column(np.float64, (3,)),
    "aabb_local_max": Column(np.float64, (3,)),
    "aabb_min": Column(np.float64, (3,)),
    "aabb_max": Column(np.float64, (3,)),
    # The turned part of the world box, kept for the orientation it was worked out for (NaN:
    # none yet): a body that only moves gets its box as `pos + box_offset -/+ box_half`.
    "box_quat": Column(np.float64, (4,), np.nan),
    "box_offset": Column(np.float64, (3,)),
    "box_half": Column(np.float64, (3,)),
    # The world box as the narrow phase tests it, worked out with the world AABB by the compiled
    # refresh (`fleetsim.collision.kernels.refresh_boxes`): level_kind 0 unturned and level, 1
    # turned about the vertical only, 2 tilted, -1 not worked out (refreshed with NumPy); for 0
    # and 1, level_box is the yaw's cosine and sine, the box's world centre and half extents.
    "level_kind": Column(np.int8, (), -1),
    "level_box": Column(np.float64, (8,)),
    "collision_mode": Column(np.int8, (), int(CollisionMode.NORMAL_3D)),
    # The collision geometry is exactly the local box (a single unrotated box): the narrow phase
    # can test it with box-box geometry instead of asking PyBullet.
    "exact_box": Column(np.bool_, (), False),
    # A mobile robot built of primitives on fixed or continuous joints (`is_rigid_primitives`):
    # with `collision_footprints` the narrow phase tests its local box, its footprint.
    "footprint": Column(np.bool_, (), False),
    # What a sensor's ray meets (`fleetsim.sensors.shapes`): 0 the local box under the pose, 1 a
    # sphere, 2 a cylinder along the body's z axis (both filling the local box).
    "ray_shape": Column(np.int8, (), 0),
    "mass": Column(np.float64),
    "pickable": Column(np.bool_, (), False),
    # A robot (an `Agent`), as opposed to an object; collision counts are kept by role.
    "robot": Column(np.bool_, (), False),
    # Moved since the last AABB refresh / pose differs from what PyBullet holds.
    "moved": Column(np.bool_, (), True),
    # Box refreshed since the last collision check (`fleetsim.collision.last_check`).
    "unchecked": Column(np.bool_, (), True),
    "dirty": Column(np.bool_, (), False),
    # Driven by PyBullet physics (mass > 0 with physics on): poses are read back, not pushed.
    "dynamic": Column(np.bool_, (), False),
    "body_id": Column(np.int32, (), -1),  # -1: no PyBullet body (yet, with lazy creation)
    # Lazy body creation: how to make this row's PyBullet body when it is needed (an index into
    # the world's recipes, `fleetsim.objects.deferred`), -1 for bodies made at once.
    "recipe": Column(np.int32, (), -1),
    # PyBullet places a URDF base by its inertial frame; this is that frame in the link frame
    # (identity for SimObjects). Pushes and reads convert between the two.
    "com_pos": Column(np.float64, (3,)),
    "com_quat": Column(np.float64, (4,), (0.0, 0.0, 0.0, 1.0)),
    "has_com_offset": Column(np.bool_, (), False),
    # Attachment: parent handle (-1: none) and the child's pose in the parent's frame.
    "parent": Column(np.int64, (), -1),
    "parent_link": Column(np.int32, (), -1),  # -1: the parent's base; else a link index
    "rel_pos": Column(np.float64, (3,)),
    "rel_quat": Column(np.float64, (4,), (0.0, 0.0, 0.0, 1.0)),
    # Held by a physics constraint instead of following kinematically.
    "constrained": Column(np.bool_, (), False),
}


class BodyTable(Table):
    """The table of all bodies in one simulation (columns: `BODY_COLUMNS`)."""

    def __init__(self, capacity: int = 256) -> None:
        super().__init__(BODY_COLUMNS, capacity)

    def footprint_radii(self, rows: np.ndarray) -> np.ndarray:
        """The radius of each body's footprint (the circle round its box in the plane), (N,)."""
        half = (self["aabb_local_max"][rows] - self["aabb_local_min"][rows])[:, :2] / 2
        radii: np.ndarray = np.hypot(half[:, 0], half[:, 1])
        return radii
