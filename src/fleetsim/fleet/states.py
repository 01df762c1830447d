"""Robot states a fleet manager keeps, and their names."""

from __future__ import annotations

from enum import IntEnum


class RobotState(IntEnum):
    """A robot's state under a fleet manager: idle, moving, waiting, working, charging, failed."""

    IDLE = 0
    MOVING = 1
    WAITING = 2  # held by traffic control
    WORKING = 3  # at a place: picking up, dropping off
    CHARGING = 4
    FAILED = 5  # stopped for good (out of battery)


STATES = [s.name.lower() for s in RobotState]
