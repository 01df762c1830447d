"""Arm actions: `JointAction` (joint targets) and `PoseAction` (end-effector target via IK).

Both finish when the joints reach their targets: kinematic arms wake the action exactly then;
arms under physics poll each step. Tolerances: the action's, else the agent's
`joint_tolerance`, else 0.01 (radians or metres, per joint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.actions.base import Action
from fleetsim.errors import ConfigError, FleetSimError, is_finite_number

if TYPE_CHECKING:
    from fleetsim.agents import Agent

UNREACHABLE = "IK target was not reachable"


class ArmMove:
    """One arm motion (joint targets or an end-effector position) and how it went."""

    def __init__(
        self,
        joint_targets: Any = None,
        ee_position: ArrayLike | None = None,
        ee_orientation: ArrayLike | None = None,
        ee_link: int | str | None = None,
        tolerance: Any = None,
        max_force: float | None = None,
    ) -> None:
        self.joint_targets = joint_targets
        self.ee_position = (
            None if ee_position is None else finite_xyz(ee_position, "ee target position")
        )
        self.ee_orientation = ee_orientation
        self.ee_link = ee_link
        self.tolerance = tolerance
        self.max_force = max_force
        self.reachable = True

    def begin(self, agent: Agent) -> None:
        """Set the joint targets (raises FleetSimError on bad targets)."""
        if self.ee_position is not None:
            self.reachable = agent.move_end_effector(
                self.ee_position, self.ee_orientation, self.ee_link, max_force=self.max_force
            )
        else:
            agent.set_all_joints_targets(self.joint_targets, self.max_force)
        agent.set_wake_tolerance(self.tolerance)

    def done(self, agent: Agent) -> bool:
        """Whether the joints are within the tolerance of their targets."""
        return agent.are_joints_at_targets(None, self.tolerance)


def checked_tolerance(tolerance: Any, what: str) -> Any:
    """`tolerance` (None, a number, or numbers by joint) when every value is finite and > 0;
    a tolerance of 0 or less is never met, so the action would never end."""
    values = (
        list(tolerance.values())
        if isinstance(tolerance, dict)
        else (list(tolerance) if isinstance(tolerance, list | tuple) else [tolerance])
    )
    for v in values:
        if v is None and tolerance is None:
            continue
        if not (is_finite_number(v) and v > 0):
            raise ConfigError(
                f"{what}: tolerance must be finite and > 0 (radians, metres), got {tolerance!r:.60}"
            )
    return tolerance


class JointAction(Action):
    """Move joints to targets: a list for all controllable joints, or a dict by joint name."""

    polls = False

    def __init__(
        self, target_joint_positions: Any, tolerance: Any = None, max_force: float = 500.0
    ) -> None:
        super().__init__()
        if target_joint_positions is None or (
            not isinstance(target_joint_positions, dict) and len(target_joint_positions) == 0
        ):
            raise ConfigError(
                "JointAction needs target_joint_positions (a list, or a dict by joint name)"
            )
        self.target_joint_positions = target_joint_positions
        self.tolerance = checked_tolerance(tolerance, "JointAction")
        self.max_force = max_force
        self._move = ArmMove(joint_targets=target_joint_positions, max_force=max_force)

    def start(self, agent: Agent) -> None:
        """Set the joint targets (motors with physics, else interpolation)."""
        if self.tolerance is None:
            self.tolerance = agent.joint_tolerance  # resolved once, written back (design rule)
        self._move.tolerance = self.tolerance
        self.polls = agent.uses_physics_joints
        try:
            self._move.begin(agent)
        except FleetSimError as exc:
            self.fail(str(exc))
            return
        self.update(agent, 0.0)

    def update(self, agent: Agent, dt: float) -> None:
        """Complete once every joint is within the tolerance of its target."""
        if self._move.done(agent):
            self.complete()


class PoseAction(Action):
    """Move the end effector to `target_position` (and `target_orientation`) by IK.

    Completes when the joints reach the IK solution and the end effector is within `tolerance`
    metres; an unreachable target moves the arm as close as it can, then ends FAILED with
    error_message "IK target was not reachable".
    """

    polls = False

    def __init__(
        self,
        target_position: ArrayLike,
        target_orientation: ArrayLike | None = None,
        end_effector_link: int | str | None = None,
        tolerance: float = 0.02,
        max_force: float = 500.0,
    ) -> None:
        super().__init__()
        self._move = ArmMove(
            ee_position=target_position,
            ee_orientation=target_orientation,
            ee_link=end_effector_link,
        )
        self.target_position = self._move.ee_position
        self.target_orientation = target_orientation
        self.end_effector_link = end_effector_link
        self.tolerance = checked_tolerance(tolerance, "PoseAction")
        self.max_force = max_force

    def start(self, agent: Agent) -> None:
        """Solve IK for the target and set the joints moving towards the solution."""
        self.polls = agent.uses_physics_joints
        try:
            self._move.begin(agent)
        except FleetSimError as exc:
            self.fail(str(exc))
            return
        self.update(agent, 0.0)

    def update(self, agent: Agent, dt: float) -> None:
        """Complete when the joints have settled and the end effector is within the tolerance; fail
        if it settled farther away or the target was out of reach."""
        if not self._move.done(agent):
            return
        if not self._move.reachable:
            self.fail(UNREACHABLE)
        elif agent.are_ee_at_target(self.tolerance):
            self.complete()
        else:
            error = np.linalg.norm(
                np.array(agent.get_end_effector_pose(self.end_effector_link).position)
                - self.target_position
            )
            self.fail(
                f"end effector stopped {error:.3f} m from the target (tolerance {self.tolerance} m)"
            )


def finite_xyz(value: ArrayLike, name: str) -> np.ndarray:
    """`value` as a float array (3,), or a `ConfigError` naming `name` unless it is 3 finite
    numbers."""
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} must be 3 finite numbers (x, y, z), got {value!r}")
    return arr
