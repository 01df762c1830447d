"""`LegsAction`: drive through a few poses and do one thing at a chosen one (Pick and Drop)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.actions.arm import UNREACHABLE, ArmMove
from fleetsim.actions.base import Action
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.geometry import Pose

if TYPE_CHECKING:
    from fleetsim.agents import Agent

LEG_TOLERANCE_M = 0.01


def approach_legs(
    agent: Agent, target_xy: np.ndarray, approach_offset: float, stand_offset: float
) -> list[tuple[Pose, bool]]:
    """Poses to drive through to reach `target_xy`: approach, stand, back to approach.

    Each is (pose, align): the robot faces the target on the way in and keeps its heading when
    backing out. Without an approach offset only the stand pose is left.
    """
    here = agent.get_pose()
    direction = target_xy - np.array(here.position[:2])
    if np.linalg.norm(direction) < 1e-9:
        direction = np.array([math.cos(here.yaw), math.sin(here.yaw)])
    direction /= np.linalg.norm(direction)
    yaw = math.atan2(direction[1], direction[0])

    def at(offset: float) -> Pose:
        x, y = target_xy - direction * offset
        return Pose.from_yaw(float(x), float(y), here.z, yaw)

    stand = at(stand_offset)
    if approach_offset <= stand_offset:
        return [(stand, True)]
    approach = at(approach_offset)
    return [(approach, True), (stand, True), (approach, False)]


class LegsAction(Action):
    """Drive through `self.legs`; at leg `self.act_at` move the arm (if asked), then `act(agent)`.

    Subclasses set `self.arm` (an `ArmMove`) to position an arm before acting; an unreachable
    IK target fails the action unless `continue_on_ik_failure`. A robot with safety fields has
    them muted on the leg into the load and while it acts (as a real robot's field set for
    docking), and on again when it backs out or the action ends.
    """

    polls = False

    def __init__(self) -> None:
        super().__init__()
        self.legs: list[tuple[Pose, bool]] = []
        self.act_at = 0
        self._leg = 0
        self.arm: ArmMove | None = None
        self.continue_on_ik_failure = True
        self._arming = False
        self._muted: Agent | None = None  # the agent whose fields this action muted

    def act(self, agent: Agent) -> None:
        """Do the action's work at its place (pick up or put down); subclasses say what."""
        raise NotImplementedError

    def begin_legs(self, agent: Agent, legs: list[tuple[Pose, bool]], act_at: int) -> None:
        """Start driving; with no legs (or a fixed base), go straight to the act point."""
        if self.arm is not None and agent.uses_physics_joints:
            self.polls = True  # motors are read back each step, not woken on arrival
        if not agent.drives:  # an arm acts where it stands
            legs, act_at = [], 0
        self.legs, self.act_at, self._leg = legs, act_at, 0
        if self.legs:
            self._drive(agent)
        else:
            self._at_act_point(agent)

    def _drive(self, agent: Agent) -> None:
        self._handling(agent, self._leg == self.act_at)
        pose, align = self.legs[self._leg]
        agent.set_goal(pose, LEG_TOLERANCE_M, align)

    def _handling(self, agent: Agent | None, on: bool) -> None:
        """Mute the agent's safety fields (into the load, acting), or unmute them."""
        if on and agent is not None and agent.safety_field_state is not None:
            agent.mute_safety_fields(True)
            self._muted = agent
        elif not on and self._muted is not None:
            if not self._muted.is_removed:
                self._muted.mute_safety_fields(False)
            self._muted = None

    def complete(self) -> None:
        """End done (the fields on again)."""
        self._handling(None, False)
        super().complete()

    def fail(self, message: str) -> None:
        """End FAILED with `message` (the fields on again)."""
        self._handling(None, False)
        super().fail(message)

    def _at_act_point(self, agent: Agent) -> None:
        if self.arm is not None and not self._arming:
            try:
                self.arm.begin(agent)
            except FleetSimError as exc:
                self.fail(str(exc))
                return
            self._arming = True
        if self.arm is None or self.arm.done(agent):
            self._act_and_go_on(agent)

    def _act_and_go_on(self, agent: Agent) -> None:
        if self.arm is not None and not self.arm.reachable and not self.continue_on_ik_failure:
            self.fail(UNREACHABLE)
            return
        self.act(agent)
        if not self.is_complete():
            self._next_leg(agent)

    def _next_leg(self, agent: Agent) -> None:
        self._leg += 1
        if self._leg < len(self.legs):
            self._drive(agent)
        else:
            self.complete()

    def update(self, agent: Agent, dt: float) -> None:
        """Drive the legs in turn, then act, then back out."""
        if self._arming and self._leg == self.act_at:
            if self.arm is not None and self.arm.done(agent):
                self._act_and_go_on(agent)
            return
        if not self.legs or not agent.is_goal_reached():
            return
        if self._leg == self.act_at:
            self._at_act_point(agent)
        else:
            self._next_leg(agent)

    def stop(self, agent: Agent) -> None:
        """Stop the agent where it is (the fields on again)."""
        self._handling(None, False)
        agent.stop()


def check_offset(name: str, value: float) -> float:
    """`value` as a float, or a `ConfigError` naming `name` unless it is a finite distance >= 0."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ConfigError(f"{name} must be a finite distance >= 0 m, got {value!r}")
    return float(value)
