"""Control: vectorised motion of all agents (omnidirectional, differential, paths, cmd_vel)."""

from fleetsim.control.models import (
    MotionModel,
    motion_model_names,
    register_motion_model,
)
from fleetsim.control.omni import Motion
from fleetsim.control.system import ANGLE_TOLERANCE_RAD, MotionSystem
from fleetsim.control.trapezoid import braking_speed, next_rate, next_speed

__all__ = [
    "ANGLE_TOLERANCE_RAD",
    "Motion",
    "MotionModel",
    "MotionSystem",
    "braking_speed",
    "motion_model_names",
    "next_rate",
    "next_speed",
    "register_motion_model",
]
