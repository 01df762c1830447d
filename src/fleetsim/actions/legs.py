"""`LegsAction`: drive through a few poses and do one thing at a chosen one (Pick and Drop)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.actions.base import Action
from fleetsim.errors import ConfigError
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
    """Drive through `self.legs` and call `act(agent)` on reaching leg `self.act_at`."""

    polls = False

    def __init__(self) -> None:
        super().__init__()
        self.legs: list[tuple[Pose, bool]] = []
        self.act_at = 0
        self._leg = 0

    def act(self, agent: Agent) -> None:
        raise NotImplementedError

    def begin_legs(self, agent: Agent, legs: list[tuple[Pose, bool]], act_at: int) -> None:
        """Start driving; with no legs (or a fixed base), act at once."""
        self.legs, self.act_at, self._leg = legs, act_at, 0
        if not legs or agent.spawn_params.use_fixed_base:
            self.act(agent)
            if not self.is_complete():
                self.complete()
            return
        self._drive(agent)

    def _drive(self, agent: Agent) -> None:
        pose, align = self.legs[self._leg]
        agent.set_goal(pose, LEG_TOLERANCE_M, align)

    def update(self, agent: Agent, dt: float) -> None:
        if not self.legs or not agent.is_goal_reached():
            return
        if self._leg == self.act_at:
            self.act(agent)
            if self.is_complete():  # failed while acting
                return
        self._leg += 1
        if self._leg < len(self.legs):
            self._drive(agent)
        else:
            self.complete()

    def stop(self, agent: Agent) -> None:
        agent.stop()


def check_offset(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ConfigError(f"{name} must be a finite distance >= 0 m, got {value!r}")
    return float(value)
