"""`nearest_pickable`: the pickable object nearest a robot that nobody holds (the loads and carts
that protocol actions such as VDA 5050 `pick` and RMF `toggle_attach` take)."""

from __future__ import annotations

from typing import Any

import numpy as np


def nearest_pickable(robot: Any, radius: float) -> Any:
    """The nearest pickable object nobody holds within `radius` m of `robot` (in the plane),
    else None."""
    world = robot.world
    b = world.bodies
    rows = np.flatnonzero(b["pickable"])
    rows = rows[b.handles[rows] != robot.handle]
    if not len(rows):
        return None
    xy = np.asarray(robot.get_pose().position[:2])
    dist = np.hypot(*(b["pos"][rows, :2] - xy).T)
    for j in np.argsort(dist, kind="stable").tolist():
        if dist[j] > radius:
            break
        obj = world.objects[int(b.handles[rows[j]])]
        if obj.attached_to is None:
            return obj
    return None
