"""What a robot model is: `RobotProfile`, `auto_detect_profile` and `detect_robot_type`.

Rules, from the joint tree alone:
- wheels are continuous joints (revolute without limits);
- the arm depth is the most limited joints (revolute or prismatic) on one root-to-leaf path;
- wheels and an arm depth of 3 or more make a mobile manipulator; wheels alone a mobile robot;
  limited joints alone an arm; no movable joints at all a static body.
- The end effector is the link of the deepest arm joint (fingers aside), or a link fixed below
  it whose name says so (tcp, grasp, end_effector, ee, tool, flange, hand, gripper).
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fleetsim.backend.introspect import (
    JointInfo,
    base_link_name,
    joint_infos,
    load_urdf,
    remove_body,
    scratch_client,
)
from fleetsim.errors import ConfigError
from fleetsim.models.catalogue import resolve_urdf

RobotType = Literal["arm", "mobile", "mobile_manipulator", "static"]
MIN_MANIPULATOR_ARM_DEPTH = 3
EE_KEYWORDS = ("tcp", "grasp", "end_effector", "eef", "ee", "tool", "flange", "hand", "gripper")


@dataclass(frozen=True)
class RobotProfile:
    """What a model is, from its joint tree. Per-joint tuples follow `movable_joint_indices`.

    Limits are radians (revolute) or metres (prismatic); unlimited joints get (-inf, inf).
    `joint_max_velocities` are the URDF's (rad/s or m/s), 0.0 where the URDF gives none.
    `ee_link_index` is a PyBullet link index; None (and no name) for robots without an arm.
    """

    robot_type: RobotType
    base_link_name: str
    num_joints: int
    movable_joint_names: tuple[str, ...]
    movable_joint_indices: tuple[int, ...]
    wheel_joint_names: tuple[str, ...]
    ee_link_name: str | None
    ee_link_index: int | None
    joint_lower_limits: tuple[float, ...]
    joint_upper_limits: tuple[float, ...]
    joint_max_velocities: tuple[float, ...]
    joint_types: tuple[str, ...] = ()  # "revolute" or "prismatic", per movable joint


def _is_limited(j: JointInfo) -> bool:
    return j.is_movable and not j.is_continuous


def _arm_depths(joints: list[JointInfo]) -> dict[int, int]:
    """Limited joints from the root down to each joint (PyBullet orders parents first)."""
    depth: dict[int, int] = {}
    for j in joints:
        depth[j.index] = depth.get(j.parent_index, 0) + int(_is_limited(j))
    return depth


def classify(joints: list[JointInfo]) -> RobotType:
    """What a robot is from its movable joints: arm, mobile, mobile manipulator or static."""
    has_wheels = any(j.is_continuous for j in joints)
    arm_depth = max(_arm_depths(joints).values(), default=0)
    if has_wheels and arm_depth >= MIN_MANIPULATOR_ARM_DEPTH:
        return "mobile_manipulator"
    if has_wheels:
        return "mobile"
    if arm_depth > 0:
        return "arm"
    return "static"


def _keyword_rank(link_name: str) -> int | None:
    name = link_name.lower()
    tokens = set(re.split(r"[^a-z0-9]+", name))
    for rank, kw in enumerate(EE_KEYWORDS):
        if kw in tokens or ("_" in kw and kw in name) or (len(kw) > 3 and kw in name):
            return rank
    return None


def find_end_effector(joints: list[JointInfo]) -> JointInfo | None:
    """The joint whose child link is the end effector, or None when there is no arm."""
    depth = _arm_depths(joints)
    arm = [j for j in joints if _is_limited(j) and "finger" not in j.name.lower()]
    if not arm:
        return None
    tip = max(arm, key=lambda j: (depth[j.index], -j.index))
    below = [tip]
    for j in joints:  # links fixed (rigidly) below the tip
        if j.joint_type == "fixed" and any(j.parent_index == b.index for b in below):
            below.append(j)
    named = [
        (rank, -i, j)
        for i, j in enumerate(below)
        if (rank := _keyword_rank(j.link_name)) is not None
    ]
    return min(named, key=lambda t: (t[0], t[1]))[2] if named else tip


def profile_of_body(client: int, body_id: int) -> RobotProfile:
    """Profile of a body already loaded in PyBullet client `client` (nothing is reloaded)."""
    joints = joint_infos(client, body_id)
    robot_type = classify(joints)
    movable = [j for j in joints if j.is_movable]
    ee = find_end_effector(joints) if robot_type in ("arm", "mobile_manipulator") else None
    return RobotProfile(
        robot_type=robot_type,
        base_link_name=base_link_name(client, body_id),
        num_joints=len(joints),
        movable_joint_names=tuple(j.name for j in movable),
        movable_joint_indices=tuple(j.index for j in movable),
        wheel_joint_names=tuple(j.name for j in joints if j.is_continuous),
        ee_link_name=ee.link_name if ee else None,
        ee_link_index=ee.index if ee else None,
        joint_lower_limits=tuple(-math.inf if j.is_continuous else j.lower for j in movable),
        joint_upper_limits=tuple(math.inf if j.is_continuous else j.upper for j in movable),
        joint_max_velocities=tuple(j.max_velocity for j in movable),
        joint_types=tuple(j.joint_type for j in movable),
    )


@functools.lru_cache(maxsize=256)
def _profile_of_file(path: str, mtime_ns: int) -> RobotProfile:
    with scratch_client() as client:
        return profile_of_body(client, load_urdf(client, path))


def auto_detect_profile(
    body_id_or_path: int | str | os.PathLike[str], client: int | None = None
) -> RobotProfile:
    """Profile of a loaded body (id + PyBullet `client`) or of a model name or file.

    Given a body id, reads it in place. Given a name or path, resolves it (`resolve_urdf`) and
    inspects it in `client` (then removes it) or, without a client, in a scratch client; results
    for files are cached until the file changes.
    """
    if isinstance(body_id_or_path, bool):
        raise ConfigError("auto_detect_profile needs a body id or a model name/path, got a bool")
    if isinstance(body_id_or_path, int):
        if client is None:
            raise ConfigError(
                "a body id needs its PyBullet client: auto_detect_profile(body_id, sim.client)"
            )
        return profile_of_body(client, body_id_or_path)
    path = resolve_urdf(body_id_or_path)
    if client is None:
        return _profile_of_file(path, Path(path).stat().st_mtime_ns)
    body = load_urdf(client, path)
    try:
        return profile_of_body(client, body)
    finally:
        remove_body(client, body)


def detect_robot_type(body_id: int, client: int) -> RobotType:
    """Just the robot type of a loaded body ("arm", "mobile", "mobile_manipulator", "static")."""
    return classify(joint_infos(client, body_id))
