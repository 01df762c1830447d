"""State: struct-of-arrays tables that hold every body's pose, box, flags and PyBullet id."""

from fleetsim.state.bodies import BODY_COLUMNS, BodyTable, CollisionMode
from fleetsim.state.table import Column, Table

__all__ = ["BODY_COLUMNS", "BodyTable", "CollisionMode", "Column", "Table"]
