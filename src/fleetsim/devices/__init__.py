"""Devices of a building that robots wait for and use: doors and lifts, and the lift ride."""

from fleetsim.devices.doors import DoorDevice, DoorMode, Doors
from fleetsim.devices.lift_ride import LiftRides, Ride
from fleetsim.devices.lifts import LiftDevice, Lifts

__all__ = ["DoorDevice", "DoorMode", "Doors", "LiftDevice", "LiftRides", "Lifts", "Ride"]
