"""Kinematic joint motion: every moving joint of every arm steps towards its target at once.

Each joint moves at its velocity limit and lands exactly on the target, so a kinematic arm costs
array operations only; PyBullet learns the positions when something reads it (pose sync rules).
"""

from __future__ import annotations

import numpy as np

from fleetsim.state.joints import JointTable

IntArray = np.ndarray


def step_kinematic_joints(joints: JointTable, dt: float) -> IntArray:
    """Advance moving, non-physics joints by `dt`; returns the body handles whose joints all
    came within their `wake_tol` of the targets in this step (an action waiting on them with
    that tolerance can finish now; the joints still land exactly on their targets later)."""
    rows = np.flatnonzero(joints["moving"] & ~joints["physics"])
    if rows.size == 0:
        return np.empty(0, dtype=np.int64)
    reach = joints["max_vel"][rows] * dt
    error = joints["target"][rows] - joints["position"][rows]
    joints["position"][rows] += np.clip(error, -reach, reach)
    arrived = np.abs(error) <= reach
    joints["position"][rows[arrived]] = joints["target"][rows[arrived]]  # exactly, no drift
    joints["moving"][rows[arrived]] = False
    joints["dirty"][rows] = True
    tol = joints["wake_tol"][rows]
    left = np.abs(joints["target"][rows] - joints["position"][rows])
    came_close = (left <= tol) & (np.abs(error) > tol)
    return finished_bodies(joints, joints["body"][rows[arrived | came_close]])


def finished_bodies(joints: JointTable, candidates: IntArray) -> IntArray:
    """Those of `candidates` (body handles) with no joint still farther than its `wake_tol`."""
    if candidates.size == 0:
        return candidates
    bodies = np.unique(candidates)
    far = joints["moving"] & (np.abs(joints["target"] - joints["position"]) > joints["wake_tol"])
    still = np.unique(joints["body"][far])
    done: IntArray = np.setdiff1d(bodies, still, assume_unique=True)
    return done
