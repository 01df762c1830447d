"""A site's graph as an Open-RMF navigation graph (the YAML RMF's fleet adapters load):
`levels: {NAME: {vertices: [[x, y, {name, is_charger, is_parking_spot, is_holding_point}]],
lanes: [[from, to, {speed_limit}]]}}`. Lanes are directed (a two-way lane is written both
ways), vertex indices count within a level, and a speed limit of 0 means none."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fleetsim.site.graph import NavGraph


def nav_graph(graph: NavGraph, building_name: str = "fleetsim") -> dict[str, Any]:
    levels: dict[str, Any] = {}
    props = graph.properties
    for li, level in enumerate(graph.level_names):
        members = np.flatnonzero(graph.level == li)
        local = {int(k): j for j, k in enumerate(members.tolist())}
        vertices = []
        for k in members.tolist():
            x, y = graph.xy[k].tolist()
            vertices.append([x, y, {
                "name": graph.names[k],
                "is_charger": bool(props["charger"][k]),
                "is_parking_spot": bool(props["parking_spot"][k]),
                "is_holding_point": bool(props["holding_point"][k]),
            }])  # fmt: skip
        lanes = []
        for a, b, two_way, limit in zip(graph.lane_from.tolist(), graph.lane_to.tolist(),
                                        graph.bidirectional.tolist(),
                                        graph.speed_limit.tolist(), strict=True):  # fmt: skip
            if a not in local or b not in local:
                continue  # another level, or between levels (lifts are not exported)
            options = {"speed_limit": limit if math.isfinite(limit) else 0.0}
            lanes.append([local[a], local[b], dict(options)])
            if two_way:
                lanes.append([local[b], local[a], dict(options)])
        levels[level] = {"vertices": vertices, "lanes": lanes}
    return {"building_name": building_name, "levels": levels}
