"""An RMF `navigate` to a place on another map (another level of the building), done by riding
a lift. (RMF itself would normally command the lift through lift requests and only then
navigate on the new map; this lets a navigate name the other map directly.)

The ride is the lifts' service (`fleetsim.devices.lift_ride`); this is the navigate's side.
The route (site graph, across the lift lanes) is driven in stages: to the node before the
cabin (the lift's entry); the lift is called there and the robot waits; into the cabin once it
is there with its doors open; aboard, carried to the next level; out and on when it has
arrived (the service lets the lift go once the robot is out of the shaft); the last stage ends
on the navigate's pose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleetsim.site import Site


@dataclass
class Across:
    """One robot's way to another map: legs of waypoints on one level each, and between two
    legs the lift that joins them."""

    legs: list[list[tuple[float, float]]]  # waypoints per level
    lifts: list[tuple[str, str, str]]  # between leg j and j + 1: (lift, from level, to level)
    goal: tuple[float, float, float]  # the navigate's x, y, yaw
    leg: int = 0
    phase: str = "drive"  # drive, call, enter, ride
    cabin: tuple[float, float] = (0.0, 0.0)
    requester: str = ""
    started: set[int] = field(default_factory=set)  # legs whose driving has begun


def plan(
    site: Site, position: Any, x: float, y: float, yaw: float, level: str, requester: str
) -> Across:
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
    if across.phase == "drive":
        points = across.legs[across.leg]
        if across.leg not in across.started:
            across.started.add(across.leg)
            ends = points if last else points[:-1]  # (short of the cabin: its last point)
            if last:
                robot.set_waypoints(
                    ends, [across.goal[2]] * len(ends), tolerance=0.05, align_orientation=True
                )
            elif ends:
                robot.set_waypoints(
                    ends, [0.0] * len(ends), tolerance=0.05, align_orientation=False
                )
            return last
        if last or (robot.is_moving and len(points) > 1):
            return last
        across.phase, across.cabin = "call", points[-1]  # at the entry: the lift is called
    lift, here, there = across.lifts[across.leg]
    rides = lifts.rides
    if across.phase == "call":
        rides.call(across.requester, lift, here, there, robot)
        if rides.may_enter(across.requester):
            robot.set_waypoints([across.cabin], [0.0], tolerance=0.05, align_orientation=False)
            across.phase = "enter"
        return False
    if across.phase == "enter":
        if rides.board(across.requester):
            across.phase = "ride"
        return False
    if across.phase == "ride" and rides.arrived(across.requester):
        across.leg += 1
        across.phase = "drive"
    return False
