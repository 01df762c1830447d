"""Objects: `SimObject` handles, their spawn parameters, attachments and the shared `World`."""

from fleetsim.geometry import ShapeParams
from fleetsim.objects.params import SimObjectSpawnParams, collision_mode_of
from fleetsim.objects.sim_object import SimObject
from fleetsim.objects.world import HasWorld, World

__all__ = [
    "HasWorld",
    "ShapeParams",
    "SimObject",
    "SimObjectSpawnParams",
    "World",
    "collision_mode_of",
]
