"""`AgentSpawnParams`: how to create one `Agent` (model, pose, motion limits), checked up front."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetsim.agents.ik_params import IKParams
from fleetsim.control.models import motion_model_id
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.objects.params import collision_mode_of
from fleetsim.state import CollisionMode, MotionMode


@dataclass(frozen=True)
class AgentSpawnParams:
    """Parameters for `Agent.from_params`.

    Attributes:
        urdf_path: a model name from the catalogue ("mobile_robot", "panda") or a URDF path.
        initial_pose: where the robot's base (URDF link frame) appears.
        max_linear_vel: top speed, m/s.
        max_linear_accel: m/s^2.
        max_angular_vel: top turning rate, rad/s.
        max_angular_accel: rad/s^2.
        motion_mode: "omnidirectional" (straight to the goal), "differential" (turn, then
            drive), or the name of a model registered with `register_motion_model`.
        mass: None keeps the URDF's masses; a number sets the base mass (kg).
        use_fixed_base: bolt the base to the world (arms); such agents cannot drive.
        collision_mode: as for `SimObjectSpawnParams`.
        pickable: as for `SimObjectSpawnParams`.
        name: as for `SimObjectSpawnParams`.
        user_data: as for `SimObjectSpawnParams`.
        ik_params: `IKParams` for `move_end_effector` (defaults when None).
        joint_tolerance: default JointAction tolerance (float, list by joint index, dict by name).
    """

    urdf_path: str = "simple_cube"
    initial_pose: Pose = field(default_factory=Pose)
    max_linear_vel: float = 1.0
    max_linear_accel: float = 1.0
    max_angular_vel: float = 1.0
    max_angular_accel: float = 2.0
    motion_mode: str = "omnidirectional"
    mass: float | None = None
    use_fixed_base: bool = False
    collision_mode: CollisionMode = CollisionMode.NORMAL_3D
    pickable: bool = False
    name: str | None = None
    user_data: dict[str, Any] = field(default_factory=dict)
    ik_params: IKParams | None = None
    joint_tolerance: float | Sequence[float] | Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for name in ("max_linear_vel", "max_linear_accel", "max_angular_vel", "max_angular_accel"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(
                    f"AgentSpawnParams.{name} must be a finite number > 0, got {value!r}"
                )
        motion_model_id(self.motion_mode)  # a registered motion model (ConfigError if not)
        if self.mass is not None and not (math.isfinite(self.mass) and self.mass >= 0):
            raise ConfigError(f"mass must be None (keep the URDF's) or >= 0 kg, got {self.mass!r}")
        if not isinstance(self.initial_pose, Pose):
            raise ConfigError(f"initial_pose must be a Pose, got {self.initial_pose!r}")
        if not isinstance(self.urdf_path, str) or not self.urdf_path:
            raise ConfigError("urdf_path must be a model name or a path to a URDF file")
        object.__setattr__(self, "collision_mode", collision_mode_of(self.collision_mode))

    @property
    def mode(self) -> int:
        """The motion model's id: a `MotionMode` for the built-ins, an int for your own."""
        model = motion_model_id(self.motion_mode)
        return MotionMode(model) if model < len(MotionMode) else model

    @property
    def limits(self) -> tuple[float, float, float, float]:
        """(max linear velocity, max linear acceleration, max angular velocity, max angular
        acceleration)."""
        return (
            self.max_linear_vel,
            self.max_linear_accel,
            self.max_angular_vel,
            self.max_angular_accel,
        )
