"""The agent table: motion state of every mobile agent, one row per agent (its own handles).

Limits and velocities are SI (m, m/s, m/s^2, rad, rad/s, rad/s^2). `body` links a row to its row in
the body table, where the pose lives.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from fleetsim.state.table import Column, Table


class MotionMode(IntEnum):
    """How an agent moves: omnidirectional, differential or a registered model."""

    OMNIDIRECTIONAL = 0
    """Moves straight towards the goal in any direction; turns while it drives."""
    DIFFERENTIAL = 1
    """Turns in place towards the goal, then drives forward; never moves sideways."""


class DriveState(IntEnum):
    """Where a differential robot is in a leg: turning to it, driving, turning to the goal yaw."""

    IDLE = 0
    GOAL = 1
    """Driving to `goal` (a single goal or the current waypoint of a path)."""
    VELOCITY = 2
    """Following a velocity command (`cmd_*`) until `cmd_until`, then braking to a stop."""


AGENT_COLUMNS: dict[str, Column] = {
    "body": Column(np.int64, (), -1),
    "mode": Column(np.int8, (), int(MotionMode.OMNIDIRECTIONAL)),
    "state": Column(np.int8, (), int(DriveState.IDLE)),
    "max_v": Column(np.float64, (), 1.0),
    "max_a": Column(np.float64, (), 1.0),
    "max_w": Column(np.float64, (), 1.0),
    "max_alpha": Column(np.float64, (), 2.0),
    # Fraction of max_v and max_w driven at now: a fleet manager's override; 0 holds the robot.
    "speed_scale": Column(np.float64, (), 1.0),
    # A fault's speed factor, part of speed_scale (0: stopped or broken down by a fault).
    "fault_scale": Column(np.float64, (), 1.0),
    # speed_scale is command_scale (the override, 0 while held, times the fault's factor) times
    # safety_scale (1 clear, the warning speed, 0 in a protective stop: `sensors.safety`).
    "command_scale": Column(np.float64, (), 1.0),
    "safety_scale": Column(np.float64, (), 1.0),
    # World-frame linear velocity (3,) and yaw rate: the motion state, also read back by users.
    "vel": Column(np.float64, (3,)),
    "yaw_rate": Column(np.float64),
    # Current target.
    "goal": Column(np.float64, (3,)),
    "goal_yaw": Column(np.float64),
    "align": Column(np.bool_, (), True),
    "final": Column(np.bool_, (), True),  # last waypoint (stop here) vs an intermediate one
    "tolerance": Column(np.float64, (), 0.01),
    # Paths: the speed limit of the leg being driven (m/s, inf: none), the unit direction of
    # the leg after the current waypoint (zero: stop there) and that leg's speed limit.
    "leg_v": Column(np.float64, (), np.inf),
    "next_dir": Column(np.float64, (3,)),
    "next_v": Column(np.float64, (), np.inf),
    "arrived": Column(np.bool_, (), False),
    # Velocity command in the body frame (vx, vy, wz) and when it expires (sim time, s).
    "cmd_lin": Column(np.float64, (2,)),
    "cmd_ang": Column(np.float64),
    "cmd_until": Column(np.float64),
}


class AgentTable(Table):
    """The motion table: one row per agent (goal, path, limits, velocities, flags)."""

    def __init__(self, capacity: int = 64) -> None:
        super().__init__(AGENT_COLUMNS, capacity)
