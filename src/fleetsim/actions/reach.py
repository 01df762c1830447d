"""Whether a robot can reach what it picks or where it drops: distances between boxes and links.

A load attached to the base must be within `reach` metres of the robot's own box (a lifting
AMR stands under or beside it); a load attached to a link (a gripper) must be within `reach` of
that link's origin. Boxes come from the pose arrays, so the test is exact for where things are
now, not where they were at the last collision check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fleetsim.collision import world_aabbs
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.objects import attachments

if TYPE_CHECKING:
    from fleetsim.agents import Agent
    from fleetsim.objects import SimObject

DEFAULT_REACH_M = 0.3
BASE_LINK = -1


def check_reach(value: float) -> float:
    """`value` as a float, or a `ConfigError` unless it is a finite distance >= 0."""
    if not (isinstance(value, int | float) and np.isfinite(value) and value >= 0):
        raise ConfigError(f"reach must be a finite distance >= 0 m, got {value!r}")
    return float(value)


def _box(obj: SimObject, pose: Pose | None = None) -> tuple[np.ndarray, np.ndarray]:
    """World box of `obj`, at its current pose or at `pose`."""
    b = obj.world.bodies
    row = b.row(obj.handle)
    pos = b["pos"][row] if pose is None else np.asarray(pose.position)
    orn = b["quat"][row] if pose is None else np.asarray(pose.orientation)
    lo, hi = world_aabbs(
        pos[None, :],
        orn[None, :],
        b["aabb_local_min"][row : row + 1],
        b["aabb_local_max"][row : row + 1],
    )
    return lo[0], hi[0]


def _gap(lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> float:
    """Distance between two boxes (0 when they overlap)."""
    apart = np.maximum(0.0, np.maximum(lo_a - hi_b, lo_b - hi_a))
    return float(np.linalg.norm(apart))


def out_of_reach(
    agent: Agent, link: int, obj: SimObject, reach: float, pose: Pose | None = None
) -> str | None:
    """Why `agent` cannot hold `obj` (at `pose`, else where it is) with `link`, or None."""
    lo, hi = _box(obj, pose)
    if link == BASE_LINK:
        distance = _gap(*_box(agent), lo, hi)
        part = "body"
    else:
        position, _ = attachments.frame_of(agent.world, agent.handle, link)
        distance = _gap(np.asarray(position), np.asarray(position), lo, hi)
        part = f"gripper (link {link})"
    if distance <= reach + 1e-9:
        return None
    where = "at the drop pose " if pose is not None else ""
    return (
        f"{obj.name} {where}is {distance:.2f} m from {agent.name}'s {part}, beyond its reach of "
        f"{reach:g} m: drive closer first (use_approach: true) or raise reach"
    )
