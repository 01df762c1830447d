"""Devices of a building that robots wait for and use: doors and lifts."""

from fleetsim.devices.doors import DoorDevice, DoorMode, Doors
from fleetsim.devices.lifts import LiftDevice, Lifts

__all__ = ["DoorDevice", "DoorMode", "Doors", "LiftDevice", "Lifts"]
