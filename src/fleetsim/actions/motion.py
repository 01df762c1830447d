"""Actions that move or wait: `MoveTo` (alias `MoveAction`) and `Wait` (alias `WaitAction`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fleetsim.actions.base import Action
from fleetsim.errors import ConfigError
from fleetsim.geometry import Path, Pose

if TYPE_CHECKING:
    from fleetsim.agents import Agent


class MoveTo(Action):
    """Drive to a pose, or along a path, until within `tolerance` metres of the end."""

    polls = False

    def __init__(
        self,
        target_pose: Pose | Path | Sequence[Pose],
        tolerance: float = 0.01,
        align_orientation: bool = True,
    ) -> None:
        super().__init__()
        if isinstance(target_pose, Pose | Path):
            self.target: Pose | Path = target_pose
        elif (
            isinstance(target_pose, Sequence)
            and target_pose
            and all(isinstance(p, Pose) for p in target_pose)
        ):
            self.target = Path(list(target_pose))
        else:
            raise ConfigError(f"MoveTo needs a Pose, a Path or a list of Pose, got {target_pose!r}")
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise ConfigError(
                f"MoveTo tolerance must be a finite distance >= 0 m, got {tolerance!r}"
            )
        self.tolerance = tolerance
        self.align_orientation = align_orientation

    def start(self, agent: Agent) -> None:
        """Send the agent to the target pose or along the target path."""
        if not agent.drives:
            self.fail(f"{agent.name} has a fixed base and cannot drive")
        elif isinstance(self.target, Path):
            agent.set_path(self.target, self.tolerance, self.align_orientation)
        else:
            agent.set_goal(self.target, self.tolerance, self.align_orientation)

    def update(self, agent: Agent, dt: float) -> None:
        """Complete when the agent has arrived within the tolerance."""
        if agent.is_goal_reached():
            self.complete()

    def stop(self, agent: Agent) -> None:
        """Stop the agent where it is."""
        agent.stop()


class Wait(Action):
    """Do nothing for `duration` simulated seconds."""

    polls = False

    def __init__(self, duration: float) -> None:
        super().__init__()
        if not (isinstance(duration, int | float) and math.isfinite(duration) and duration >= 0):
            raise ConfigError(
                f"Wait duration must be a finite number of seconds >= 0, got {duration!r}"
            )
        self.duration = float(duration)
        self.end_time = math.inf

    def start(self, agent: Agent) -> None:
        """Note when the wait began."""
        self.end_time = agent.world.time + self.duration
        if self.duration == 0:
            self.complete()
        else:
            self.wake_at(agent, self.end_time)

    def update(self, agent: Agent, dt: float) -> None:
        """Complete once `duration` simulated seconds have passed."""
        if agent.world.time + 1e-9 >= self.end_time:
            self.complete()


MoveAction = MoveTo
WaitAction = Wait
