"""Objects: `SimObject` handles, their spawn parameters, attachments and the shared `World`."""

from fleetsim.geometry import ShapeParams
from fleetsim.objects.params import SimObjectSpawnParams, collision_mode_of
from fleetsim.objects.sim_object import SimObject
from fleetsim.objects.world import ActionTicker, HasWorld, SiteDoors, World

__all__ = [
    "ActionTicker",
    "HasWorld",
    "ShapeParams",
    "SimObject",
    "SimObjectSpawnParams",
    "SiteDoors",
    "World",
    "collision_mode_of",
]
