"""State: struct-of-arrays tables that hold every body's pose, box, flags and PyBullet id."""

from fleetsim.state.agents import AGENT_COLUMNS, AgentTable, DriveState, MotionMode
from fleetsim.state.bodies import BODY_COLUMNS, BodyTable, CollisionMode
from fleetsim.state.joints import JOINT_COLUMNS, JointTable
from fleetsim.state.table import Column, Table, rows_of

__all__ = [
    "AGENT_COLUMNS",
    "BODY_COLUMNS",
    "JOINT_COLUMNS",
    "AgentTable",
    "BodyTable",
    "CollisionMode",
    "Column",
    "DriveState",
    "JointTable",
    "MotionMode",
    "Table",
    "rows_of",
]
