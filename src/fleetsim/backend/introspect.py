"""Reading a loaded body's structure (links, joints, limits) from a PyBullet client id.

Works on any client, including a short-lived DIRECT client used to inspect a URDF file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pybullet as pb

from fleetsim.errors import BackendError
from fleetsim.logs import LogLevelManager

_JOINT_TYPES = {
    pb.JOINT_REVOLUTE: "revolute",
    pb.JOINT_PRISMATIC: "prismatic",
    pb.JOINT_SPHERICAL: "spherical",
    pb.JOINT_PLANAR: "planar",
    pb.JOINT_FIXED: "fixed",
}


@dataclass(frozen=True)
class JointInfo:
    """One joint as PyBullet reports it. Limits in rad or m; `lower > upper` means unlimited."""

    index: int
    name: str
    joint_type: str
    lower: float
    upper: float
    max_force: float
    max_velocity: float
    link_name: str
    parent_index: int

    @property
    def is_movable(self) -> bool:
        """Whether the joint moves (revolute, prismatic or continuous)."""
        return self.joint_type in ("revolute", "prismatic")

    @property
    def is_continuous(self) -> bool:
        """A revolute joint without limits, such as a wheel."""
        return self.joint_type == "revolute" and self.lower >= self.upper


def joint_infos(client: int, body_id: int) -> list[JointInfo]:
    """All joints of a body, in PyBullet's joint (= child link) order."""
    try:
        count = pb.getNumJoints(body_id, physicsClientId=client)
        infos = [pb.getJointInfo(body_id, j, physicsClientId=client) for j in range(count)]
    except pb.error as exc:
        raise BackendError(f"cannot read body {body_id} in client {client}: {exc}") from exc
    return [
        JointInfo(
            index=int(i[0]),
            name=i[1].decode(),
            joint_type=_JOINT_TYPES.get(i[2], "unknown"),
            lower=float(i[8]),
            upper=float(i[9]),
            max_force=float(i[10]),
            max_velocity=float(i[11]),
            link_name=i[12].decode(),
            parent_index=int(i[16]),
        )
        for i in infos
    ]


def base_link_name(client: int, body_id: int) -> str:
    """The name of a body's base link."""
    return str(pb.getBodyInfo(body_id, physicsClientId=client)[0].decode())


def load_urdf(client: int, path: str, fixed_base: bool = False) -> int:
    """Load a URDF (or SDF: its first body) at the origin; returns the body id."""
    try:
        with LogLevelManager.quiet_native():
            if path.lower().endswith(".sdf"):
                return int(pb.loadSDF(path, physicsClientId=client)[0])
            return int(pb.loadURDF(path, useFixedBase=fixed_base, physicsClientId=client))
    except pb.error as exc:
        raise BackendError(f"PyBullet could not load {path}: {exc}") from exc


def remove_body(client: int, body_id: int) -> None:
    """Remove a body from client `client`."""
    pb.removeBody(body_id, physicsClientId=client)


@contextlib.contextmanager
def scratch_client() -> Iterator[int]:
    """A temporary DIRECT client for inspecting files, disconnected afterwards."""
    client = pb.connect(pb.DIRECT)
    if client < 0:
        raise BackendError("could not start a PyBullet DIRECT client")
    try:
        yield client
    finally:
        pb.disconnect(physicsClientId=client)
