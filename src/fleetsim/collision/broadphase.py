"""Spatial-hash broadphase over world AABBs, vectorised with sorting instead of Python loops.

Every box is hashed into each xy cell it covers (so bodies larger than a cell are found from all
of them). Sorting the (cell, body) entries groups each cell's bodies together; all pairs within
each group are generated with array arithmetic, de-duplicated, and kept if their boxes overlap.
"""

from __future__ import annotations

import numpy as np

IntArray = np.ndarray

_CELL_LIMIT = 2**20  # cell coordinates are folded into one int64 key below this range
MAX_CELLS_PER_BODY = 64  # bigger bodies skip the hash and are tested against everyone


def candidate_pairs(
    lo: np.ndarray, hi: np.ndarray, cell_size: float, ignore_z: np.ndarray | None = None
) -> tuple[IntArray, IntArray]:
    """Index pairs (i < j) of boxes that overlap: lo/hi (N, 3) in metres.

    `ignore_z` (N,) marks boxes whose pairs are tested on x and y only. Returns two int arrays.
    """
    n = len(lo)
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    c0 = np.floor(lo[:, :2] / cell_size).astype(np.int64)
    c1 = np.floor(hi[:, :2] / cell_size).astype(np.int64)
    span = c1 - c0 + 1  # cells covered along x and y
    counts = span[:, 0] * span[:, 1]
    big = np.flatnonzero(counts > MAX_CELLS_PER_BODY)
    counts[big] = 0
    hashed_i, hashed_j = _hashed_pairs(n, c0, span, counts)
    if big.size:  # a few huge bodies (docks, walls): test each against all the others
        bi = np.repeat(big, n)
        bj = np.tile(np.arange(n), big.size)
        keep = bi != bj
        a, b = np.minimum(bi[keep], bj[keep]), np.maximum(bi[keep], bj[keep])
        keys = np.unique(np.r_[hashed_i * n + hashed_j, a * n + b])
        hashed_i, hashed_j = keys // n, keys % n
    return overlapping(lo, hi, hashed_i, hashed_j, ignore_z)


def _hashed_pairs(
    n: int, c0: np.ndarray, span: np.ndarray, counts: np.ndarray
) -> tuple[IntArray, IntArray]:
    """Unique (i < j) pairs of bodies sharing at least one cell."""
    body = np.repeat(np.arange(n), counts)
    k = np.arange(len(body)) - np.repeat(np.cumsum(counts) - counts, counts)  # index within body
    sx = np.repeat(span[:, 0], counts)
    cx = np.repeat(c0[:, 0], counts) + k % sx
    cy = np.repeat(c0[:, 1], counts) + k // sx
    keys = (cx % _CELL_LIMIT) * _CELL_LIMIT + (cy % _CELL_LIMIT)

    order = np.argsort(keys, kind="stable")
    keys, body = keys[order], body[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    crowded = sizes > 1
    if not crowded.any():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    first = np.repeat(starts, sizes)
    later = np.repeat(sizes, sizes) - (np.arange(len(keys)) - first) - 1  # members after me
    left = np.repeat(np.arange(len(keys)), later)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(later) - later, later)
    a, b = body[left], body[left + 1 + offset]
    unique = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    return unique // n, unique % n


def overlapping(
    lo: np.ndarray, hi: np.ndarray, i: IntArray, j: IntArray, ignore_z: np.ndarray | None = None
) -> tuple[IntArray, IntArray]:
    """The pairs (i, j) whose boxes overlap (touching counts), z skipped where `ignore_z`."""
    xy = np.all((lo[i, :2] <= hi[j, :2]) & (lo[j, :2] <= hi[i, :2]), axis=1)
    z = (lo[i, 2] <= hi[j, 2]) & (lo[j, 2] <= hi[i, 2])
    if ignore_z is not None:
        z |= ignore_z[i] | ignore_z[j]
    keep = xy & z
    return i[keep], j[keep]


def suggested_cell_size(lo: np.ndarray, hi: np.ndarray) -> float:
    """A cell about twice the median body footprint: few cells per body, few bodies per cell."""
    extent = np.max(hi[:, :2] - lo[:, :2], axis=1)
    extent = extent[np.isfinite(extent) & (extent > 0)]
    return float(2.0 * np.median(extent)) if extent.size else 1.0
