"""A building of three levels, each drawn at its own scale, turn and offset (`building()`), and
the transform from world metres to a level's pixels (`to_pixels`)."""

from __future__ import annotations

import math
from typing import Any

# How each level's drawing relates to the world: metres per pixel, turn (rad), offset (m).
DRAWINGS = {
    "L1": (0.05, 0.0, (0.0, 0.0)),
    "L2": (0.04, 0.1, (3.0, -2.0)),
    "L3": (0.06, -0.05, (-1.5, 4.0)),
}


ELEVATIONS = {"L1": 0.0, "L2": 4.0, "L3": 8.0}


FIDUCIALS = {"north": (2.0, 1.0), "east": (14.0, -3.0), "south": (3.0, -9.0)}


LIFT = (10.0, -5.0)  # the cabin's centre in the world


PLACES = {  # per level: named places in the world (m); each joins the lift by a corridor
    "L1": {"lobby": (2.0, -5.0), "desk": (6.0, -5.0)},
    "L2": {"ward_a": (2.5, -4.0), "nurse": (6.0, -4.0)},
    "L3": {"lab": (4.0, -6.5), "store": (7.0, -6.5)},
}


def to_pixels(level: str, world: tuple[float, float]) -> list[float]:
    """The inverse of the drawing's transform: world metres to this level's image pixels."""
    scale, turn, (tx, ty) = DRAWINGS[level]
    x, y = world[0] - tx, world[1] - ty
    c, s = math.cos(-turn), math.sin(-turn)
    u, v = (c * x - s * y) / scale, (s * x + c * y) / scale
    return [u, -v]  # image y points down


def building() -> dict[str, Any]:
    levels: dict[str, Any] = {}
    for level, places in PLACES.items():
        named = list(places.items())
        vertices = [[*to_pixels(level, xy), 0, name] for name, xy in named]
        vertices.append([*to_pixels(level, LIFT), 0, ""])  # the lift's vertex: unnamed
        lift_vertex = len(vertices) - 1
        lanes = [
            [0, 1, {"bidirectional": [4, True], "graph_idx": [2, 0]}],
            [1, lift_vertex, {"bidirectional": [4, True], "graph_idx": [2, 0]}],
        ]
        # a wall and a door beside the corridor, and a measurement on the reference level
        vertices += [[*to_pixels(level, xy), 0, ""] for xy in ((4.0, -7.0), (8.0, -7.0))]
        spec: dict[str, Any] = {
            "elevation": ELEVATIONS[level],
            "vertices": vertices,
            "lanes": lanes,
            "walls": [[3, 4, {"texture_height": [3, 2.0]}]],
            "fiducials": [[*to_pixels(level, xy), name] for name, xy in FIDUCIALS.items()],
            "doors": [[3, 4, {"name": [1, f"{level}_door"], "type": [1, "sliding"]}]],
        }
        if level == "L1":
            spec["measurements"] = [[3, 4, {"distance": [3, 4.0]}]]
            spec["floors"] = [{"vertices": [0, 1, 2]}]  # not simulated: said so by name
        levels[level] = spec
    lift = {
        "x": to_pixels("L1", LIFT)[0],
        "y": to_pixels("L1", LIFT)[1],
        "yaw": 0.0,
        "width": 2.0,
        "depth": 2.0,
        "reference_floor_name": "L1",
        "level_doors": {"L1": ["door1"], "L2": ["door1"], "L3": ["door1"]},
        "doors": {
            "door1": {"door_type": 2, "x": 0, "y": -1, "motion_axis_orientation": 0, "width": 1.5}
        },
    }
    return {
        "name": "tower",
        "coordinate_system": "reference_image",
        "levels": levels,
        "lifts": {"Lift1": lift},
        "crowd_sim": {"enable": 0},
    }
