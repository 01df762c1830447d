"""PyBullet joint services for one client: joint positions, motors, link poses and IK."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as pb

from fleetsim.errors import BackendError


class JointBackend:
    """Joint-level PyBullet calls on client `client` (all pass the client id)."""

    def __init__(self, client_of: object) -> None:
        self._owner = client_of  # the Backend; its client id can change only by closing

    @property
    def _client(self) -> int:
        return int(self._owner.client)  # type: ignore[attr-defined]

    def write_positions(
        self, body_id: int, joints: Sequence[int], positions: Sequence[float]
    ) -> None:
        """Set joint positions (zero velocity) in one call."""
        pb.resetJointStatesMultiDof(
            body_id, list(joints), [[p] for p in positions], physicsClientId=self._client
        )

    def read_positions(self, body_id: int, joints: Sequence[int]) -> np.ndarray:
        """The positions of `joints` of a body, (len(joints),)."""
        states = pb.getJointStates(body_id, list(joints), physicsClientId=self._client)
        return np.array([s[0] for s in states], dtype=np.float64)

    def drive(
        self, body_id: int, joints: Sequence[int], targets: Sequence[float], forces: Sequence[float]
    ) -> None:
        """Position-controlled motors with force (N or N m) limits, for physics mode."""
        pb.setJointMotorControlArray(
            body_id,
            list(joints),
            pb.POSITION_CONTROL,
            targetPositions=list(targets),
            forces=list(forces),
            physicsClientId=self._client,
        )

    def link_count(self, body_id: int) -> int:
        """Links besides the base (valid link indices are -1 .. count - 1)."""
        count: int = pb.getNumJoints(body_id, physicsClientId=self._client)
        return count

    def link_pose(self, body_id: int, link: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """World pose of a link's URDF frame (forward kinematics from the current joints)."""
        if link < 0:
            pos, orn = pb.getBasePositionAndOrientation(body_id, physicsClientId=self._client)
            com_pos, com_orn = pb.getDynamicsInfo(body_id, -1, physicsClientId=self._client)[3:5]
            pos, orn = pb.multiplyTransforms(pos, orn, *pb.invertTransform(com_pos, com_orn))
            return tuple(pos), tuple(orn)
        state = pb.getLinkState(
            body_id, link, computeForwardKinematics=True, physicsClientId=self._client
        )
        return tuple(state[4]), tuple(state[5])

    def world_aabb(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(min, max) around all links at their current poses."""
        c = self._client
        links = range(-1, pb.getNumJoints(body_id, physicsClientId=c))
        boxes = [pb.getAABB(body_id, link, physicsClientId=c) for link in links]
        return np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0)

    def inverse_kinematics(
        self,
        body_id: int,
        link: int,
        position: Sequence[float] | np.ndarray,
        orientation: Sequence[float] | None,
        limits: tuple[np.ndarray, np.ndarray],
        rest: np.ndarray,
        iterations: int,
        residual: float,
    ) -> np.ndarray:
        """PyBullet's damped-least-squares IK; one value per non-fixed joint, in joint order."""
        lower, upper = limits
        kwargs: dict[str, object] = {
            "lowerLimits": lower.tolist(),
            "upperLimits": upper.tolist(),
            "jointRanges": np.maximum(upper - lower, 1e-6).tolist(),
            "restPoses": rest.tolist(),
            "maxNumIterations": iterations,
            "residualThreshold": residual,
            "physicsClientId": self._client,
        }
        if orientation is not None:
            kwargs["targetOrientation"] = list(orientation)
        try:
            return np.array(pb.calculateInverseKinematics(body_id, link, list(position), **kwargs))
        except pb.error as exc:
            raise BackendError(f"PyBullet IK failed on body {body_id} link {link}: {exc}") from exc
