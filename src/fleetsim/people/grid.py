"""`pairs_within`: every pair of points closer than a reach, found through a uniform grid of
cells as wide as the reach (each point looks in its own cell and four of the eight around it,
so that each pair is found once), as array operations."""

from __future__ import annotations

import numpy as np

HALF_NEIGHBOURHOOD = ((0, 0), (1, -1), (1, 0), (1, 1), (0, 1))  # (dx, dy): each pair once
DENSE_CELLS_PER_POINT = 16  # up to this many cells a point, a table of cells beats searching


def expand(start: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs `start[k]`, `count[k]`: the run each element comes from and the element's
    index (start + offset), flattened."""
    owner = np.repeat(np.arange(len(count)), count)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
    return owner, start[owner] + offset


def pairs_within(x: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i != j, each pair once, of points `x` (n, 2) no farther apart
    than `reach`."""
    n = len(x)
    empty = np.empty(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    cell = np.floor(x / reach).astype(np.int64)
    cell -= cell.min(axis=0) - 1  # (a ring of empty cells round them: no wrapping keys)
    height = int(cell[:, 1].max()) + 2
    key = cell[:, 0] * height + cell[:, 1]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    cells = (int(cell[:, 0].max()) + 2) * height
    dense = cells <= DENSE_CELLS_PER_POINT * n + 4096  # (a table of every cell's first point)
    if dense:
        first = np.searchsorted(sorted_key, np.arange(cells + 1))
    found_i, found_j = [], []
    for dx, dy in HALF_NEIGHBOURHOOD:
        want = key + dx * height + dy
        if dense:
            start = first[want]
            count = first[want + 1] - start
        else:
            start = np.searchsorted(sorted_key, want, side="left")
            count = np.searchsorted(sorted_key, want, side="right") - start
        if dx == 0 and dy == 0:  # (its own cell: only those after it in the sorted order)
            rank = np.empty(n, dtype=np.int64)
            rank[order] = np.arange(n)
            count = start + count - (rank + 1)
            start = rank + 1
        owner, at = expand(start, np.maximum(count, 0))
        found_i.append(owner)
        found_j.append(order[at])
    i, j = np.concatenate(found_i), np.concatenate(found_j)
    d = x[j] - x[i]
    near = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] <= reach * reach
    return i[near], j[near]
