"""The waypoints a vehicle drives for a stretch of its base: each node's position (from the
order, or the site), the points of an edge's `trajectory` before it, the edge's `maxSpeed` on
the leg, and the edge's `orientation` (GLOBAL, or TANGENTIAL to the way driven) held on the way
by an omnidirectional vehicle. A differential vehicle drives forwards only, so it takes no
orientation but the tangential 0 (`orientation_problem`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from fleetsim.interfaces.vda5050 import nurbs
from fleetsim.interfaces.vda5050.messages import Edge, Node, OrientationType

Place = tuple[float, float, float | None]


@dataclass
class Waypoints:
    """What a vehicle drives: points, yaws, per-leg speed limits and where it faces."""

    points: list[tuple[float, float]] = field(default_factory=list)
    yaws: list[float] = field(default_factory=list)
    limits: list[float] = field(default_factory=list)  # m/s of the leg ending at each
    face: list[bool] = field(default_factory=list)  # hold the yaw on the way there
    align: bool = False  # end on the last node's theta


def plan(
    nodes: list[Node],
    edges: list[Edge],
    place: Callable[[Node], Place | None],
    here: tuple[float, float],
    heading: float,
) -> Waypoints:
    """Waypoints through `nodes` (base nodes not yet passed) from `here`; `edges` are the
    order's, the edge before a node (sequenceId one less) shaping the leg to it."""
    into = {e.sequence_id + 1: e for e in edges if e.released}
    out = Waypoints()
    prev = here
    for node in nodes:
        px, py, theta = place(node) or (0.0, 0.0, None)
        edge = into.get(node.sequence_id)
        limit = (edge.max_speed if edge is not None else None) or math.inf
        inner: list[tuple[float, float]] = []
        if edge is not None and edge.trajectory is not None:  # the curve, between its ends
            inner = [(float(x), float(y)) for x, y in nurbs.sample(edge.trajectory)[1:-1].tolist()]
        for x, y in [*inner, (px, py)]:
            yaw, face = theta if theta is not None else heading, False
            if edge is not None and edge.orientation is not None:
                yaw, face = edge.orientation, True
                if edge.orientation_type is not OrientationType.GLOBAL:  # tangential, default
                    yaw = _wrap(math.atan2(y - prev[1], x - prev[0]) + edge.orientation)
            out.points.append((x, y))
            out.yaws.append(yaw)
            out.limits.append(limit)
            out.face.append(face)
            prev = (x, y)
    last = nodes[-1]
    if last.node_position is not None and last.node_position.theta is not None:
        out.align, out.yaws[-1] = True, last.node_position.theta
    return out


def orientation_problem(edge: Edge, omnidirectional: bool) -> str | None:
    """Why a vehicle cannot hold `edge`'s orientation, else None."""
    if edge.orientation is None or omnidirectional:
        return None
    if edge.orientation_type is not OrientationType.GLOBAL and abs(edge.orientation) < 1e-3:
        return None  # forwards along the edge: what a differential vehicle does anyway
    kind = (edge.orientation_type or OrientationType.TANGENTIAL).value
    return (
        f"edge {edge.edge_id!r}: orientation {edge.orientation:g} ({kind}); a differential "
        "vehicle drives forwards along an edge only"
    )


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi
