"""Getting joint positions to and from PyBullet, one call per robot, and boxes of moving arms."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only; World imports this module
    from fleetsim.objects.world import World

IntArray = np.ndarray


def push_joint_rows(world: World, rows: IntArray) -> None:
    """Write the positions of joint `rows` to PyBullet, grouped into one call per robot."""
    j = world.joints
    rows = rows[j["dirty"][rows]]
    if rows.size == 0:
        return
    ids = j["body_id"][rows]
    order = np.argsort(ids, kind="stable")
    rows, ids = rows[order], ids[order]
    for group in np.split(rows, np.flatnonzero(np.diff(ids)) + 1):
        world.backend.joints.write_positions(
            int(j["body_id"][group[0]]), j["joint"][group].tolist(), j["position"][group].tolist()
        )
    j["dirty"][rows] = False


def joint_rows_of(world: World, body_handles: IntArray) -> IntArray:
    """The joint-table rows of the bodies with `body_handles`, in order."""
    rows: IntArray = np.flatnonzero(np.isin(world.joints["body"], body_handles))
    return rows


def read_physics_joints(world: World) -> IntArray:
    """After a physics step, copy motor-driven joint positions into the table; returns bodies."""
    j = world.joints
    rows = np.flatnonzero(j["physics"])
    if rows.size == 0:
        return np.empty(0, dtype=np.int64)
    ids = j["body_id"][rows]
    for body_id in np.unique(ids).tolist():
        group = rows[ids == body_id]
        j["position"][group] = world.backend.joints.read_positions(
            body_id, j["joint"][group].tolist()
        )
    j["moving"][rows] = np.abs(j["target"][rows] - j["position"][rows]) > 1e-3
    bodies: IntArray = np.unique(j["body"][rows])
    return bodies


def refresh_arm_boxes(world: World, body_handles: IntArray) -> None:
    """World boxes of robots whose joints moved, measured around all their links in PyBullet."""
    if body_handles.size == 0:
        return
    b = world.bodies
    rows = b.rows(body_handles)
    world.sync_rows(rows)
    b.version += 1
    b["unchecked"][rows] = True
    for row in rows.tolist():
        b["aabb_min"][row], b["aabb_max"][row] = world.backend.joints.world_aabb(
            int(b["body_id"][row])
        )
