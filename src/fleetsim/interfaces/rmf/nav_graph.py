"""A site's graph as an Open-RMF navigation graph (the YAML RMF's fleet adapters load), written
as RMF's own generator (`rmf_building_map_tools`) writes it: `building_name`, and
`levels: {NAME: {vertices: [[x, y, {name, is_charger, is_parking_spot, is_holding_point,
lift?}]], lanes: [[from, to, {speed_limit, door_name}]]}}`, and for a building `lifts: {NAME:
{position: [x, y, yaw], dims: [width, depth]}}` and `doors: {NAME: {endpoints, map}}`. Lanes
are directed (a two-way lane is written both ways), vertex indices count within a level, a
speed limit of 0 means none, a vertex without a name in the building gets an empty name, a
vertex in a lift's shaft names the lift, and a lane that crosses a door names it
(`door_name`: RMF asks for that door to open before the robot drives the lane)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from fleetsim.devices.doors import crosses
from fleetsim.site.graph import NavGraph
from fleetsim.site.rmf_building import Door, Lift


def nav_graph(
    graph: NavGraph,
    building_name: str = "fleetsim",
    doors: Sequence[Door] = (),
    unnamed: Collection[str] = (),
    lifts: Sequence[Lift] = (),
    lift_of: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Every level of the graph; with `lifts`, the `lifts` section (cabin position and yaw,
    width and depth) and the `lift` of each vertex inside one (`lift_of`), and the `doors`
    section (each door's end points and level), as RMF's generator writes them."""
    lift_of = lift_of or {}
    levels: dict[str, Any] = {}
    props = graph.properties
    for li, level in enumerate(graph.level_names):
        members = np.flatnonzero(graph.level == li)
        local = {int(k): j for j, k in enumerate(members.tolist())}
        vertices = []
        for k in members.tolist():
            x, y = graph.xy[k].tolist()
            name = graph.names[k]
            params = {
                "name": "" if name in unnamed else name,
                "is_charger": bool(props["charger"][k]),
                "is_parking_spot": bool(props["parking_spot"][k]),
                "is_holding_point": bool(props["holding_point"][k]),
            }
            if name in lift_of:
                params["lift"] = lift_of[name]
            vertices.append([x, y, params])
        level_doors = [d for d in doors if d.level == level]
        lanes = []
        for a, b, two_way, limit in zip(
            graph.lane_from.tolist(),
            graph.lane_to.tolist(),
            graph.bidirectional.tolist(),
            graph.speed_limit.tolist(),
            strict=True,
        ):
            if a not in local or b not in local:
                continue  # another level's (RMF joins levels through the lifts' vertices)
            options: dict[str, Any] = {"speed_limit": limit if math.isfinite(limit) else 0.0}
            for door in level_doors:
                if crosses(graph.xy[a], graph.xy[b], door.ends[0], door.ends[1]):
                    options["door_name"] = door.name
            lanes.append([local[a], local[b], dict(options)])
            if two_way:
                lanes.append([local[b], local[a], dict(options)])
        levels[level] = {"vertices": vertices, "lanes": lanes}
    out: dict[str, Any] = {"building_name": building_name, "levels": levels}
    if lifts or doors:
        out["lifts"] = {
            lift.name: {"position": [lift.x, lift.y, lift.yaw], "dims": [lift.width, lift.depth]}
            for lift in lifts
        }
        out["doors"] = {d.name: {"endpoints": d.ends.tolist(), "map": d.level} for d in doors}
    return out
