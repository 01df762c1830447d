"""An RMF `navigate` to a place on another map (another level of the building), done by riding
a lift. (RMF itself would normally command the lift through lift requests and only then
navigate on the new map; this lets a navigate name the other map directly.)

The route (site graph, across the lift lanes) is driven in stages: to the node before the
cabin; the lift is called there and the robot waits; into the cabin once it is there with its
doors open; aboard, the lift is sent to the next level; out and on when it has arrived, the
lift let go once the robot is out of the shaft; the last stage ends on the navigate's pose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleetsim.site import Site

AT_M = 0.1  # within this of a stage's end, stopped: the stage is done
CLEAR_M = 0.8  # out of the shaft's reach by this much: the lift is let go


@dataclass
class Across:
    """One robot's way to another map: legs of waypoints on one level each, and between two
    legs the lift that joins them."""

    legs: list[list[tuple[float, float]]]  # waypoints per level
    lifts: list[tuple[str, str, str]]  # between leg j and j + 1: (lift, from level, to level)
    goal: tuple[float, float, float]  # the navigate's x, y, yaw
    leg: int = 0
    phase: str = "drive"  # drive, call, enter, ride, leave
    cabin: tuple[float, float] = (0.0, 0.0)
    holding: str | None = None  # the lift it has a session with
    requester: str = ""
    started: set[int] = field(default_factory=set)  # legs whose driving has begun


def plan(site: Site, position: Any, x: float, y: float, yaw: float, level: str,
         requester: str) -> Across:  # fmt: skip
    """The legs and lifts from `position` (x, y, z) to (x, y) on `level`."""
    graph = site.graph
    start = int(site.nearest_nodes(position)[0][0])
    goal = graph.nearest_node(x, y, level)
    nodes = list(graph.route(start, goal).nodes)
    rides = {}
    for lane, lift in site.lift_lanes.items():
        a, b = int(graph.lane_from[lane]), int(graph.lane_to[lane])
        rides[(a, b)] = rides[(b, a)] = lift
    legs: list[list[tuple[float, float]]] = [[]]
    lifts = []
    for k, node in enumerate(nodes):
        legs[-1].append((float(graph.xy[node][0]), float(graph.xy[node][1])))
        if k + 1 < len(nodes) and (node, nodes[k + 1]) in rides:
            here = graph.level_names[int(graph.level[node])]
            there = graph.level_names[int(graph.level[nodes[k + 1]])]
            lifts.append((rides[(node, nodes[k + 1])], here, there))
            legs.append([])
    legs[-1].append((x, y))
    return Across(legs, lifts, (x, y, yaw), requester=requester)


def step(across: Across, robot: Any, lifts: Any) -> bool:
    """Advance one robot's stages; True once the last leg is being driven (done as a navigate)."""
    last = across.leg == len(across.legs) - 1
    if across.holding is not None and across.phase == "drive":
        x, y = robot.get_pose().position[:2]
        if math.hypot(x - across.cabin[0], y - across.cabin[1]) > CLEAR_M + 1.5:
            lifts.release(across.holding, across.requester)
            across.holding = None
    if across.phase == "drive":
        points = across.legs[across.leg]
        if across.leg not in across.started:
            across.started.add(across.leg)
            ends = points if last else points[:-1]  # (short of the cabin: its last point)
            if last:
                robot.set_waypoints(ends, [across.goal[2]] * len(ends), tolerance=0.05,
                                    align_orientation=True)  # fmt: skip
            elif ends:
                robot.set_waypoints(ends, [0.0] * len(ends), tolerance=0.05,
                                    align_orientation=False)  # fmt: skip
            return last
        if last or (robot.is_moving and len(points) > 1):
            return last
        across.phase, across.cabin = "call", points[-1]
    lift, here, there = across.lifts[across.leg]
    if across.phase == "call":
        lifts.request(lift, across.requester, here)
        across.holding = lift
        if lifts[lift].ready(here, across.requester):
            robot.set_waypoints([across.cabin], [0.0], tolerance=0.05, align_orientation=False)
            across.phase = "enter"
        return False
    if across.phase == "enter":
        x, y = robot.get_pose().position[:2]
        if robot.is_moving or math.hypot(x - across.cabin[0], y - across.cabin[1]) > AT_M:
            return False
        if not lifts.board(lift, across.requester, robot):
            return False
        lifts.request(lift, across.requester, there)
        across.phase = "ride"
        return False
    if across.phase == "ride" and lifts[lift].ready(there, across.requester):
        lifts.alight(lift, across.requester)
        across.leg += 1
        across.phase = "drive"
    return False
