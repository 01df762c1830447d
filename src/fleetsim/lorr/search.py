"""Breadth-first distances on a grid, for planners (fleetsim's default LoRR planner uses it):
compiled with Numba when it is there (about a millisecond for the kit's largest maps), else
level by level in NumPy."""

from __future__ import annotations

import numpy as np

from fleetsim import jit

FAR = 1 << 30  # unreachable


def grid_neighbours(free: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(4, cells) int64: each cell's free neighbour east, south, west and north (-1: none)."""
    cells = np.arange(rows * cols)
    r, c = np.divmod(cells, cols)
    out = np.full((4, rows * cols), -1, dtype=np.int64)
    for k, (dr, dc) in enumerate(((0, 1), (1, 0), (0, -1), (-1, 0))):
        nr, nc = r + dr, c + dc
        inside = (nr >= 0) & (nr < rows) & (nc >= 0) & (nc < cols)
        target = np.where(inside, nr * cols + nc, 0)
        ok = inside & free[target]
        out[k, ok] = target[ok]
    return out


def distances_from(neighbours: np.ndarray, goal: int) -> np.ndarray:
    """Moves from every cell to `goal` (int32; `FAR` where it cannot be reached)."""
    cells = neighbours.shape[1]
    dist = np.full(cells, FAR, dtype=np.int32)
    kernel = jit.compiled(_queue_search)
    if kernel is not None:
        kernel(neighbours, goal, dist, np.empty(cells, dtype=np.int64))
        return dist
    dist[goal] = 0
    frontier = np.array([goal])
    level = 0
    while frontier.size:
        level += 1
        reached = neighbours[:, frontier].ravel()
        reached = reached[reached >= 0]
        reached = np.unique(reached[dist[reached] == FAR])
        dist[reached] = level
        frontier = reached
    return dist


def _queue_search(neighbours: np.ndarray, goal: int, dist: np.ndarray, queue: np.ndarray) -> None:
    dist[goal] = 0
    queue[0] = goal
    head, tail = 0, 1
    while head < tail:
        cell = queue[head]
        head += 1
        for k in range(4):
            nxt = neighbours[k, cell]
            if nxt >= 0 and dist[nxt] == FAR:
                dist[nxt] = dist[cell] + 1
                queue[tail] = nxt
                tail += 1
