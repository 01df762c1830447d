"""Where to put a camera so that it shows the whole fleet (the GUI's "auto" camera, and
`capture_image` without a GUI)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.collision import refresh_moved_aabbs

if TYPE_CHECKING:
    from fleetsim.core.simulation import MultiRobotSimulationCore


def frame_fleet(
    sim: MultiRobotSimulationCore, view: str
) -> tuple[float, float, float, tuple[float, float, float]]:
    """Camera (distance, yaw, pitch, target) that shows every body, from above or at an angle."""
    b = sim.world.bodies
    refresh_moved_aabbs(b)  # bodies spawned since the last step have no world box yet
    if len(b) == 0:
        return (
            sim.params.camera_distance,
            sim.params.camera_yaw,
            sim.params.camera_pitch,
            (0.0, 0.0, 0.0),
        )
    lo, hi = b["aabb_min"].min(axis=0), b["aabb_max"].max(axis=0)
    centre = (lo + hi) / 2
    extent = float(np.max(hi[:2] - lo[:2]))
    fov = math.radians(60.0)  # PyBullet's GUI camera
    distance = max(1.0, 1.15 * extent / (2 * math.tan(fov / 2)))
    target = (float(centre[0]), float(centre[1]), float(lo[2]))
    if view == "top_down":
        return distance, 0.0, -89.9, target
    return distance * 0.9, 45.0, -45.0, target
