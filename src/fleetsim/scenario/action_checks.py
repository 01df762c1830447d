"""What a robot can never do, whatever the moment: an action its kind forbids."""

from __future__ import annotations

from typing import Any

from fleetsim.agents import Agent
from fleetsim.scenario import schema as s


def cannot_do(action: Any, robot: Agent) -> str | None:
    """Why `robot` can never do `action` (its kind forbids it), or None."""
    kind = robot.profile.robot_type
    if isinstance(action, s.MoveToSpec | s.GoToSpec) and not robot.drives:
        return (
            f"{robot.name} ({kind}) has a fixed base and cannot drive; "
            "use joints or reach actions, or a mobile model"
        )
    needs_arm = isinstance(action, s.JointsSpec | s.ReachSpec) or (
        isinstance(action, s.PickSpec | s.DropSpec)
        and (action.joint_targets is not None or action.ee_target_position is not None)
    )
    if needs_arm and not robot.controllable_joints:
        return f"{robot.name} ({kind}) has no arm joints to move"
    return None
