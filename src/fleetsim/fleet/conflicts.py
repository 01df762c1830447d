"""Which nodes of a site graph two robots may not hold at once: every node within the traffic
clearance of another, and the nodes of lanes in one mutex group (one robot at a time)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fleetsim.site import NavGraph


@dataclass(frozen=True)
class Csr:
    indptr: np.ndarray
    indices: np.ndarray


def mutex_nodes(graph: NavGraph) -> dict[int, set[int]]:
    """For each node at the end of a lane in a mutex group, the other nodes of its groups'
    lanes: one robot at a time in a group."""
    members: dict[int, set[int]] = {}
    for group in np.unique(graph.mutex[graph.mutex >= 0]).tolist():
        lanes = graph.mutex == group
        nodes = set(graph.lane_from[lanes].tolist()) | set(graph.lane_to[lanes].tolist())
        for k in nodes:
            members.setdefault(k, set()).update(nodes)
    return members


def conflict_sets(xy: np.ndarray, radius: float, extra: dict[int, set[int]] | None = None) -> Csr:
    """For each node, the nodes within `radius` (itself included), by a grid of radius cells,
    and the nodes `extra` adds to it."""
    cell = np.floor(xy / max(radius, 1e-9)).astype(np.int64)
    order = np.lexsort((cell[:, 1], cell[:, 0]))
    keys = [tuple(c) for c in cell[order].tolist()]
    buckets: dict[tuple[int, int], list[int]] = {}
    for k, key in zip(order.tolist(), keys, strict=True):
        buckets.setdefault(key, []).append(k)
    indptr, indices = [0], []
    for k, (cx, cy) in enumerate(cell.tolist()):
        near = [
            m
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            for m in buckets.get((cx + dx, cy + dy), ())
            if math.hypot(*(xy[m] - xy[k])) < radius or m == k
        ]
        if extra and k in extra:
            near = sorted(set(near) | extra[k])
        indices.extend(near)
        indptr.append(len(indices))
    return Csr(np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64))
