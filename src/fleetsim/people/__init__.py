"""People on the fleet's floors: pedestrians as arrays moved by the collision-free speed model
(`model`), walls as indexed segments (`walls`), a crowd's state and routes (`crowd`)."""

from fleetsim.people.crowd import Crowd, free_speeds
from fleetsim.people.model import Obstacles, SpeedModel, StepResult, step_people
from fleetsim.people.walls import Walls, box_sides

__all__ = [
    "Crowd",
    "Obstacles",
    "SpeedModel",
    "StepResult",
    "Walls",
    "box_sides",
    "free_speeds",
    "step_people",
]
