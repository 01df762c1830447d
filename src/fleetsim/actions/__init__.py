"""Actions: per-agent FIFO queues of MoveTo, Wait, Pick, Drop (and your own `Action`s)."""

from fleetsim.actions.arm import JointAction, PoseAction
from fleetsim.actions.base import Action, ActionStatus
from fleetsim.actions.manipulation import Drop, DropAction, Pick, PickAction
from fleetsim.actions.motion import MoveAction, MoveTo, Wait, WaitAction
from fleetsim.actions.pose_route import GoToPose
from fleetsim.actions.routes import GoTo
from fleetsim.actions.runner import ACTION_EVENTS, ActionSystem

__all__ = [
    "ACTION_EVENTS",
    "Action",
    "ActionStatus",
    "ActionSystem",
    "Drop",
    "DropAction",
    "GoTo",
    "GoToPose",
    "JointAction",
    "MoveAction",
    "MoveTo",
    "Pick",
    "PickAction",
    "PoseAction",
    "Wait",
    "WaitAction",
]
