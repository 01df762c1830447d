"""Control: vectorised motion of all agents (omnidirectional, differential, paths, cmd_vel)."""

from fleetsim.control.system import ANGLE_TOLERANCE_RAD, MotionSystem
from fleetsim.control.trapezoid import braking_speed, next_rate, next_speed

__all__ = ["ANGLE_TOLERANCE_RAD", "MotionSystem", "braking_speed", "next_rate", "next_speed"]
