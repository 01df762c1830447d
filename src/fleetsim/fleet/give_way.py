"""Giving way to a robot that left a node and still stands by the way into it.

Reservations keep robots apart at nodes. A robot stopped just past a node it left (a fault, a
queue) no longer holds that node, yet can stand beside another lane into it, where two lanes
meet at a sharp angle (a drop-off station's way in and out): a robot granted the node then
would brush past it. Traffic control asks `in_the_way` before it grants nodes, and the robot
asking gives way (`TrafficControl.giving_way_to`) until the other has driven off.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl


def in_the_way(t: TrafficControl, i: int, way: list[int]) -> int:
    """A robot that let a node of robot i's `way` (its last held node, then the nodes it asks
    for) go and still stands within `t.clearance` of the lanes between them (on the same
    floor), else -1. Positions are those of the current step (`t._xy_now`)."""
    xy = t._xy_now
    assert xy is not None
    xs, ys, level = t.graph.xs, t.graph.ys, t.graph.level
    for m in way:
        j = int(t.left_by[m])
        if j < 0 or j == i or not t.routes[j]:
            continue
        if level[t.routes[j][int(t.tail[j])]] != level[m]:
            continue  # on another floor
        if t.lift_rides.sharing and t.lift_rides.mates(i, j, way[-1]):
            continue  # riding one cabin together: each drives to its own spot in it
        px, py = float(xy[j, 0]), float(xy[j, 1])
        for a, b in itertools.pairwise(way):
            if to_segment(px, py, xs[a], ys[a], xs[b], ys[b]) < t.clearance:
                return j
    return -1


def to_segment(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> float:
    """Distance from the point (px, py) to the segment from (ax, ay) to (bx, by)."""
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else min(1.0, max(0.0, ((px - ax) * dx + (py - ay) * dy) / length2))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)
