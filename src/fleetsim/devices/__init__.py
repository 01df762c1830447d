"""Devices of a building that robots wait for and use: doors (and, next, lifts)."""

from fleetsim.devices.doors import DoorDevice, DoorMode, Doors

__all__ = ["DoorDevice", "DoorMode", "Doors"]
