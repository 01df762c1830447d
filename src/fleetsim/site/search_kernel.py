"""A* compiled with Numba (`fleetsim.jit`) for `NavGraph.route`.

The same search as `NavGraph._search`, step for step: the frontier a heap of (estimate, minus
the distance so far, node), ties to the node farthest along, the estimate the Manhattan
distance on graphs whose lanes all run along x or y and the straight line (a square root of
the same sum) on others, the same sums in the same order; so the same route.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from fleetsim import jit
from fleetsim.jit import compiled


def search(
    xy: np.ndarray,
    to: Any,
    start: Any,
    lane: Any,
    length: Any,
    s: int,
    g: int,
    blocked: Any,
    limit: int,
    weight: float,
    manhattan: bool,
) -> tuple[bool, np.ndarray | None]:
    """`NavGraph._search`, compiled: (True, the node before each node on the way, enough to
    walk back from `g`; or None when there is no route within `limit` expansions); (False,
    None) when it did not run (no Numba, or a small graph in a process that has not loaded
    it): the caller searches itself."""
    kernel = compiled(_astar) if jit.eager() or jit.worth_loading(len(xy)) else None
    if kernel is None:
        return False, None
    n = len(xy)
    done = np.zeros(n, dtype=np.bool_)
    if blocked:
        done[np.fromiter(blocked, dtype=np.int64, count=len(blocked))] = True
    previous = np.full(n, -1, dtype=np.int64)
    found = kernel(
        np.ascontiguousarray(xy, dtype=np.float64),
        np.asarray(to),
        np.asarray(start),
        np.asarray(lane),
        np.asarray(length),
        int(s),
        int(g),
        done,
        int(limit),
        float(weight),
        bool(manhattan),
        previous,
    )
    return True, previous if found else None


def _astar(
    xy: Any,
    to: Any,
    start: Any,
    lane: Any,
    length: Any,
    s: int,
    g: int,
    done: Any,
    limit: int,
    weight: float,
    manhattan: bool,
    previous: Any,
) -> bool:
    gx, gy = xy[g, 0], xy[g, 1]
    best = np.full(xy.shape[0], np.inf)
    best[s] = 0.0
    dx, dy = xy[s, 0] - gx, xy[s, 1] - gy
    h = abs(dx) + abs(dy) if manhattan else np.sqrt(dx * dx + dy * dy)
    frontier = [(weight * h, -0.0, np.int64(s))]
    while frontier:
        _, neg_d, u = heapq.heappop(frontier)
        d = -neg_d
        if u == g:
            return True
        if done[u]:
            continue
        done[u] = True
        limit -= 1
        if limit < 0:
            return False
        for e in range(start[u], start[u + 1]):
            v = np.int64(to[e])
            nd = d + length[lane[e]]
            if nd < best[v]:
                best[v] = nd
                previous[v] = u
                dx, dy = xy[v, 0] - gx, xy[v, 1] - gy
                h = abs(dx) + abs(dy) if manhattan else np.sqrt(dx * dx + dy * dy)
                heapq.heappush(frontier, (nd + weight * h, -nd, v))
    return False
