"""The joint table: one row per controlled joint of every arm, its position, target and limits.

Units: radians for revolute joints, metres for prismatic ones; velocities per second.
"""

from __future__ import annotations

import numpy as np

from fleetsim.state.table import Column, Table

JOINT_COLUMNS: dict[str, Column] = {
    "body": Column(np.int64, (), -1),  # body handle of the robot
    "body_id": Column(np.int32, (), -1),  # its PyBullet id
    "joint": Column(np.int32, (), -1),  # PyBullet joint index
    "position": Column(np.float64),
    "target": Column(np.float64),
    "max_vel": Column(np.float64, (), 2.0),
    "max_force": Column(np.float64, (), 500.0),
    "lower": Column(np.float64, (), -np.inf),
    "upper": Column(np.float64, (), np.inf),
    "moving": Column(np.bool_, (), False),  # not yet at its target
    "dirty": Column(np.bool_, (), False),  # PyBullet does not hold `position` yet
    "physics": Column(np.bool_, (), False),  # driven by PyBullet motors, not interpolated
    # How close counts as there for the action waiting on this joint (0: exactly).
    "wake_tol": Column(np.float64, (), 0.0),
}


class JointTable(Table):
    """The joint table: a row per controllable joint of every robot (positions, targets, limits)."""

    def __init__(self, capacity: int = 64) -> None:
        super().__init__(JOINT_COLUMNS, capacity)
