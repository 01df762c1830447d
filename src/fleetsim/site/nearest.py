"""Nearest nodes of many points at once, without measuring every node for every point.

The nodes are sorted into square cells (about four nodes to a cell). For each point, the
search looks at the cells in a square around the point's cell, growing the square until the
best node found is nearer than the square's edge: no node outside could be nearer. Points far
from every node (the square would grow past the site) are measured against all nodes. Ties go
to the lowest node index, as `np.argmin` over all nodes would give.
"""

from __future__ import annotations

import numpy as np

SMALL_GRAPH = 4096  # nodes: up to this many, measure them all (no index)
BLOCK = 1 << 12  # points measured against all nodes at a time


class NodeIndex:
    """Cells of nodes for nearest-node queries; built once per graph, on first use."""

    def __init__(self, xy: np.ndarray) -> None:
        self.xy = xy
        n = len(xy)
        low, high = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(high - low, 1e-9)
        self.size = float(max(np.sqrt(span[0] * span[1] * 4 / n), span.max() * 4 / n, 1e-9))
        self.low = low
        self.shape = (np.floor(span / self.size).astype(np.int64) + 1).tolist()
        cx, cy = self._cells(xy)
        key = cx * self.shape[1] + cy
        self.order = np.argsort(key, kind="stable").astype(np.int32 if n < 2**31 else np.int64)
        self.starts = np.zeros(self.shape[0] * self.shape[1] + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=self.shape[0] * self.shape[1]), out=self.starts[1:])

    def _cells(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.floor((p - self.low) / self.size)
        cx = np.clip(c[:, 0], 0, self.shape[0] - 1).astype(np.int64)
        cy = np.clip(c[:, 1], 0, self.shape[1] - 1).astype(np.int64)
        return cx, cy

    def nearest(
        self, points: np.ndarray, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Node index and distance of the nearest allowed node to each point (P, 2)."""
        best = np.zeros(len(points), dtype=np.int64)
        dist = np.full(len(points), np.inf)
        open_ = np.arange(len(points))
        cx, cy = self._cells(points)
        # how far a point lies outside the cells (a point off the site is clipped onto them)
        outside = np.hypot(*np.maximum(np.abs(points - self._centres(cx, cy)) - self.size / 2, 0).T)
        reach = 1
        while len(open_) and reach <= max(self.shape):
            k, d = self._in_square(points[open_], cx[open_], cy[open_], reach, allowed)
            better = (d < dist[open_]) | ((d == dist[open_]) & (k < best[open_]))
            best[open_[better]], dist[open_[better]] = k[better], d[better]
            # settled: nothing outside the square can be nearer than its edge
            # (a tie at the edge stays open: a lower index may lie just outside)
            open_ = open_[dist[open_] >= reach * self.size - outside[open_]]
            reach *= 2
        if len(open_):
            best[open_], dist[open_] = brute_force(self.xy, points[open_], allowed)
        return best, dist

    def _centres(self, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        centres: np.ndarray = self.low + (np.column_stack((cx, cy)) + 0.5) * self.size
        return centres

    def _in_square(
        self, p: np.ndarray, cx: np.ndarray, cy: np.ndarray, reach: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest allowed node among the cells within `reach` cells of each point's
        (index -1 and distance inf where there is none)."""
        rows = self.shape[1]
        point, node = [], []
        for dx in range(-reach, reach + 1):
            x = cx + dx
            inside = (x >= 0) & (x < self.shape[0])
            x = np.clip(x, 0, self.shape[0] - 1) * rows
            first = self.starts[x + np.clip(cy - reach, 0, rows - 1)]
            count = np.where(
                inside, self.starts[x + np.clip(cy + reach, 0, rows - 1) + 1] - first, 0
            )
            point.append(np.repeat(np.arange(len(p)), count))
            skip = np.repeat(first - np.cumsum(count) + count, count)
            node.append(self.order[skip + np.arange(len(skip))])
        q, k = np.concatenate(point), np.concatenate(node)
        if allowed is not None:
            q, k = q[allowed[k]], k[allowed[k]]
        d = np.hypot(self.xy[k, 0] - p[q, 0], self.xy[k, 1] - p[q, 1])
        pick = np.lexsort((k, d, q))  # by point, nearest first, lowest index on ties
        first = pick[np.r_[True, q[pick][1:] != q[pick][:-1]]] if len(pick) else pick
        best = np.full(len(p), -1, dtype=np.int64)
        dist = np.full(len(p), np.inf)
        best[q[first]], dist[q[first]] = k[first], d[first]
        return best, dist


def brute_force(
    xy: np.ndarray, points: np.ndarray, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest allowed node of each point by measuring every node (a block of points at a
    time, so memory stays bounded)."""
    best = np.zeros(len(points), dtype=np.int64)
    dist = np.empty(len(points))
    step = max(1, BLOCK * 1024 // max(len(xy), 1))
    for s in range(0, len(points), step):
        p = points[s : s + step]
        d = np.hypot(xy[None, :, 0] - p[:, None, 0], xy[None, :, 1] - p[:, None, 1])
        if allowed is not None:
            d[:, ~allowed] = np.inf
        k = np.argmin(d, axis=1)
        best[s : s + step], dist[s : s + step] = k, d[np.arange(len(p)), k]
    return best, dist
