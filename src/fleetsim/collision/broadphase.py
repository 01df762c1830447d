"""Spatial-hash broadphase over world AABBs, vectorised with sorting instead of Python loops.

The common case (most bodies no wider than a cell) hashes each body once, by the cell of its
lower corner: two such bodies can only overlap if their cells are equal or adjacent, so pairs come
from each cell and from four of its eight neighbours (the other four see the same pairs from the
other side), with no duplicates to remove. The few wider bodies are tested against everyone.

When many bodies are wider than a cell (a small constant cell size), every box is hashed into
each xy cell it covers; sorting the (cell, body) entries groups each cell's bodies, all pairs
within each group are generated with array arithmetic and de-duplicated.

Small scenes (moving bodies x all bodies up to `SMALL_SCENE_PAIRS`, a warehouse of 100 robots
and its racks) test every pair at once (`small_scene_pairs`, used by the collision system).
Small fleets (up to `SWEEP_MAX_BODIES`, unless the compiled kernel takes them) sweep instead:
sorted along the longer side of the site, each box is paired with the boxes that start within
its span there, in a few array calls (the hash costs more in fixed call overhead than it saves
below about a thousand bodies). A sweep that would pair far more boxes than there are (a site
crowded along both sides) hands over to the hash.
"""

from __future__ import annotations

import numpy as np

from fleetsim.collision import kernels
from fleetsim.geometry.vectors import ramp

IntArray = np.ndarray

_CELL_LIMIT = 2**20  # cell coordinates are folded into one int64 key below this range
MAX_CELLS_PER_BODY = 64  # bigger bodies skip the hash and are tested against everyone
_BRUTE_FORCE_PAIRS = 400_000  # wide bodies x all bodies tested directly up to this many pairs
SWEEP_MAX_BODIES = 1024  # fleets up to this size sweep (see above)
_SWEEP_PAIRS_PER_BODY = 16  # ... unless the sweep would test more candidate pairs than this
SMALL_SCENE_PAIRS = 32_768  # moving x all bodies up to this: every pair tested at once
# `candidate_pairs_of` takes at most this share of the boxes marked (more: every pair tested
# costs about as much as each marked box looking round its cells)
PARTIAL_SHARE = 1 / 3


def partial_pays(marked: int, used: int) -> bool:
    """Whether `candidate_pairs_of` takes `marked` boxes of `used` (the share it pays for):
    callers ask before they make its arguments."""
    return marked <= PARTIAL_SHARE * used


def candidate_pairs(
    lo: np.ndarray, hi: np.ndarray, cell_size: float, ignore_z: np.ndarray | None = None
) -> tuple[IntArray, IntArray]:
    """Index pairs (i < j) of boxes that overlap: lo/hi (N, 3) in metres, sorted by (i, j).

    `ignore_z` (N,) marks boxes whose pairs are tested on x and y only. Returns two int arrays.
    """
    n = len(lo)
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    compiled = kernels.usable(n)
    if n <= SWEEP_MAX_BODIES and not compiled:
        swept = _sweep_pairs(lo, hi, ignore_z)
        if swept is not None:
            return swept
    if compiled:  # the usual large fleet (finite, none wide) in two compiled passes
        found = _compiled_grid(lo, hi, cell_size, ignore_z)
        if found is not None:
            return found
    extent = np.maximum(hi[:, 0] - lo[:, 0], hi[:, 1] - lo[:, 1])
    wide = np.flatnonzero(~(extent <= cell_size))  # NaN and inf count as wide
    narrow = np.delete(extent, wide)
    # the smallest cell that still holds every narrow body: fewer neighbours to test
    small_cell = max(float(narrow.max()), cell_size / 4) if narrow.size else cell_size
    if wide.size * n <= _BRUTE_FORCE_PAIRS and _cells_fit(lo, wide, small_cell):
        use = np.ones(n, dtype=bool)
        use[wide] = False
        if compiled:  # a large fleet with wide bodies: the compiled kernel for the rest
            flat = ignore_z if ignore_z is not None else np.zeros(n, dtype=bool)
            i, j = kernels.grid_pairs(lo, hi, use, small_cell, flat)
            wi, wj = overlapping(lo, hi, *_wide_pairs(lo, hi, wide), ignore_z)
            i, j = np.concatenate((i, wi)), np.concatenate((j, wj))
            order = np.argsort(i * n + j)
            return i[order], j[order]
        i, j = _single_cell_pairs(lo, small_cell, wide)
        if wide.size:  # disjoint from the grid's pairs, which have no wide body
            wi, wj = _wide_pairs(lo, hi, wide)
            i, j = np.concatenate((i, wi)), np.concatenate((j, wj))
    else:
        i, j = _multi_cell_pairs(lo, hi, cell_size)
    i, j = overlapping(lo, hi, i, j, ignore_z)
    order = np.argsort(i * n + j)
    return i[order], j[order]


def candidate_pairs_of(
    lo: np.ndarray,
    hi: np.ndarray,
    cell_size: float,
    use: np.ndarray,
    query: np.ndarray,
    ignore_z: np.ndarray,
) -> tuple[IntArray, IntArray] | None:
    """`candidate_pairs` of the boxes marked in `use` (bool, N), restricted to the pairs with
    a `query` (bool, N) box, for a large scene where few boxes changed since the last check:
    through the compiled grid, where only the marked boxes look round their cells. None when
    that path does not pay or apply (more than `PARTIAL_SHARE` of the used boxes marked; no
    Numba, a small scene, a used box wide or not finite): the caller tests every pair."""
    n = int(np.count_nonzero(use))
    if n < 2 or not kernels.usable(n) or not partial_pays(int(np.count_nonzero(query)), n):
        return None
    return _compiled_grid(lo, hi, cell_size, ignore_z, use, query)


def _compiled_grid(
    lo: np.ndarray,
    hi: np.ndarray,
    cell_size: float,
    ignore_z: np.ndarray | None,
    use: np.ndarray | None = None,
    query: np.ndarray | None = None,
) -> tuple[IntArray, IntArray] | None:
    """The compiled grid's pairs of the boxes in `use` (default all; `kernels.grid_pairs`;
    with `query`, only the marked boxes' pairs), or None when a box is wide or not finite, or
    the site too wide for the grid's keys."""
    found = kernels.narrow_bounds(lo, hi, cell_size, use)
    if found is None:
        return None
    widest, x0, x1, y0, y1, inner = found
    small_cell = max(widest, cell_size / 4)
    if not ((x1 - x0) / small_cell < _CELL_LIMIT and (y1 - y0) / small_cell < _CELL_LIMIT):
        return None
    flat = ignore_z if ignore_z is not None else np.zeros(len(lo), dtype=bool)
    every = np.ones(len(lo), dtype=bool) if use is None else use
    bounds = (x0, x1, y0, y1)
    return kernels.grid_pairs(lo, hi, every, small_cell, flat, bounds, query, inner)


def small_scene_pairs(
    lo: np.ndarray,
    hi: np.ndarray,
    moving: IntArray,
    fixed: IntArray,
    ignore_z: np.ndarray | None = None,
) -> tuple[IntArray, IntArray]:
    """Row pairs whose boxes overlap (touching counts, as `overlapping`): each `moving` row
    with the moving rows after it and with every `fixed` row, all tested at once. For small
    scenes (up to `SMALL_SCENE_PAIRS` tests) a dozen array calls beat any index."""
    other = np.concatenate((moving, fixed))
    low, high = lo[:, 0], hi[:, 0]  # a matrix for x and y; z on the few pairs left
    apart = np.greater.outer(low[moving], high[other])
    apart |= np.less.outer(high[moving], low[other])
    low, high = lo[:, 1], hi[:, 1]
    apart |= np.greater.outer(low[moving], high[other])
    apart |= np.less.outer(high[moving], low[other])
    np.logical_not(apart, out=apart)
    flat = apart.ravel().nonzero()[0]  # (sparse: far cheaper than a 2-D nonzero)
    r, k = np.divmod(flat, other.size)
    keep = k > r  # moving pairs once, no body with itself (fixed columns are all past r)
    i, j = moving[r[keep]], other[k[keep]]
    low, high = lo[:, 2], hi[:, 2]
    away = (low[i] > high[j]) | (low[j] > high[i])
    if ignore_z is not None:
        away &= ~(ignore_z[i] | ignore_z[j])
    return i[~away], j[~away]


def _sweep_pairs(
    lo: np.ndarray, hi: np.ndarray, ignore_z: np.ndarray | None
) -> tuple[IntArray, IntArray] | None:
    """Sweep and prune along x or y (the longer spread); None when a box is not finite (the
    hash treats those as wide) or the sweep would test too many candidate pairs."""
    n = len(lo)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return None
    spread = np.ptp(lo[:, :2], axis=0)
    axis = int(spread[1] > spread[0])
    low = lo[:, axis]
    order = np.argsort(low, kind="stable")
    # sorted box k with the boxes after it that start before it ends on the axis
    later = np.searchsorted(low[order], hi[order, axis], side="right") - np.arange(1, n + 1)
    np.maximum(later, 0, out=later)
    if later.sum() > _SWEEP_PAIRS_PER_BODY * n:
        return None
    left = np.repeat(np.arange(n), later)
    a, b = order[left], order[left + 1 + ramp(later)]
    i, j = overlapping(lo, hi, np.minimum(a, b), np.maximum(a, b), ignore_z)
    by_pair = np.argsort(i * n + j)
    return i[by_pair], j[by_pair]


def _cells_fit(lo: np.ndarray, wide: IntArray, cell_size: float) -> bool:
    """Whether the narrow bodies' cells span few enough rows and columns for one int64 key."""
    x, y = lo[:, 0], lo[:, 1]
    if wide.size:
        keep = np.ones(len(lo), dtype=bool)
        keep[wide] = False
        x, y = x[keep], y[keep]
    if len(x) < 2:
        return True
    # one column at a time (contiguous copies reduce far faster than strided columns)
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    return bool((x.max() - x.min()) / cell_size < _CELL_LIMIT) and bool(
        (y.max() - y.min()) / cell_size < _CELL_LIMIT
    )


def _single_cell_pairs(
    lo: np.ndarray, cell_size: float, wide: IntArray
) -> tuple[IntArray, IntArray]:
    """(i < j) pairs of narrow bodies whose lower-corner cells are equal or adjacent."""
    body = np.arange(len(lo))
    x, y = (np.floor(lo[:, axis] / cell_size).astype(np.int64) for axis in (0, 1))
    if wide.size:
        body, x, y = np.delete(body, wide), np.delete(x, wide), np.delete(y, wide)
    if body.size < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    x -= x.min() - 1  # from 1, so that x - 1 stays >= 0
    y -= y.min()
    height = int(y.max()) + 2  # y + 1 never wraps into the next column
    keys = x * height + y
    order = np.argsort(keys, kind="stable")  # timsort: near-linear as the order persists
    keys, body = keys[order], body[order]
    m = len(keys)
    starts, sizes = _runs(keys)
    group = np.repeat(np.arange(len(starts)), sizes)  # each sorted entry's cell group

    left, right = _pairs_within_runs(sizes)  # pairs inside one cell

    # pairs with the cells at +x, +x+y, +y and -x+y
    cell_keys = keys[starts]
    neighbour = cell_keys[:, None] + np.array([height, height + 1, 1, 1 - height])
    hit, hit_size = _lookup(cell_keys, sizes, neighbour, int(keys[-1]) + height + 2)
    counts = hit_size[group].ravel()  # (entries * 4)
    cross_left = np.repeat(np.repeat(np.arange(m), 4), counts)
    cross_right = np.repeat(starts[hit[group].ravel()], counts) + ramp(counts)

    a = body[np.concatenate((left, cross_left))]
    b = body[np.concatenate((right, cross_right))]
    return np.minimum(a, b), np.maximum(a, b)


def _lookup(
    cell_keys: IntArray, sizes: IntArray, query: IntArray, key_limit: int
) -> tuple[IntArray, IntArray]:
    """For each query key, its group index and size (0 when that cell is empty)."""
    if key_limit <= 32 * len(cell_keys) + 65536:  # most sites: a direct table, one gather
        table = np.full(key_limit, -1, dtype=np.int32)
        table[cell_keys] = np.arange(len(cell_keys), dtype=np.int32)
        hit = table[query]
        return hit.clip(min=0), np.where(hit >= 0, sizes[hit], 0)
    hit = np.searchsorted(cell_keys, query).clip(max=len(cell_keys) - 1)
    return hit, np.where(cell_keys[hit] == query, sizes[hit], 0)


def _runs(keys: IntArray) -> tuple[IntArray, IntArray]:
    """Start index and length of each run of equal values in sorted `keys`."""
    change = np.empty(len(keys), dtype=bool)
    change[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    sizes = np.diff(starts, append=len(keys))
    return starts, sizes


def _pairs_within_runs(sizes: IntArray) -> tuple[IntArray, IntArray]:
    """Index pairs (k < l) of sorted entries in the same run, runs of `sizes` laid end to end:
    each entry with the members after it."""
    entry = np.arange(int(sizes.sum()))
    later = np.repeat(sizes, sizes) - ramp(sizes) - 1
    left = np.repeat(entry, later)
    return left, left + 1 + ramp(later)


def _wide_pairs(lo: np.ndarray, hi: np.ndarray, wide: IntArray) -> tuple[IntArray, IntArray]:
    """(i < j) pairs with a wide body whose boxes overlap in x and y, each pair once."""
    n = len(lo)
    touch = np.ones((len(wide), n), dtype=bool)
    for axis in (0, 1):  # every wide box against every box, as one (wide, n) comparison
        low, high = lo[:, axis], hi[:, axis]
        touch &= (low[wide, None] <= high[None, :]) & (low[None, :] <= high[wide, None])
    is_wide = np.zeros(n, dtype=bool)
    is_wide[wide] = True
    # itself, and a pair of wide bodies seen from its larger index (it is also seen from the other)
    touch &= ~(is_wide[None, :] & (np.arange(n)[None, :] <= wide[:, None]))
    w, other = np.nonzero(touch)
    a = wide[w]
    return np.minimum(a, other), np.maximum(a, other)


def _against_all(n: int, wide: IntArray) -> tuple[IntArray, IntArray]:
    """Every pair (i < j) with at least one wide body."""
    bi = np.repeat(wide, n)
    bj = np.tile(np.arange(n), wide.size)
    keep = bi != bj
    return np.minimum(bi[keep], bj[keep]), np.maximum(bi[keep], bj[keep])


def _union(
    n: int, first: tuple[IntArray, IntArray], second: tuple[IntArray, IntArray]
) -> tuple[IntArray, IntArray]:
    keys = np.unique(np.r_[first[0] * n + first[1], second[0] * n + second[1]])
    return keys // n, keys % n


def _multi_cell_pairs(
    lo: np.ndarray, hi: np.ndarray, cell_size: float
) -> tuple[IntArray, IntArray]:
    """(i < j) pairs sharing a cell, each body hashed into every cell it covers."""
    n = len(lo)
    c0 = np.floor(lo[:, :2] / cell_size).astype(np.int64)
    c1 = np.floor(hi[:, :2] / cell_size).astype(np.int64)
    span = c1 - c0 + 1  # cells covered along x and y
    counts = span[:, 0] * span[:, 1]
    big = np.flatnonzero(counts > MAX_CELLS_PER_BODY)
    counts[big] = 0
    pairs = _hashed_pairs(n, c0, span, counts)
    if big.size:  # a few huge bodies (docks, walls): test each against all the others
        pairs = _union(n, pairs, _against_all(n, big))
    return pairs


def _hashed_pairs(
    n: int, c0: np.ndarray, span: np.ndarray, counts: np.ndarray
) -> tuple[IntArray, IntArray]:
    """Unique (i < j) pairs of bodies sharing at least one cell."""
    body = np.repeat(np.arange(n), counts)
    k = ramp(counts)  # index of each entry within its body
    sx = np.repeat(span[:, 0], counts)
    cx = np.repeat(c0[:, 0], counts) + k % sx
    cy = np.repeat(c0[:, 1], counts) + k // sx
    keys = (cx % _CELL_LIMIT) * _CELL_LIMIT + (cy % _CELL_LIMIT)

    order = np.argsort(keys, kind="stable")
    keys, body = keys[order], body[order]
    _, sizes = _runs(keys)
    crowded = sizes > 1
    if not crowded.any():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    left, right = _pairs_within_runs(sizes)
    a, b = body[left], body[right]
    unique = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    return unique // n, unique % n


def overlapping(
    lo: np.ndarray, hi: np.ndarray, i: IntArray, j: IntArray, ignore_z: np.ndarray | None = None
) -> tuple[IntArray, IntArray]:
    """The pairs (i, j) whose boxes overlap (touching counts), z skipped where `ignore_z`."""
    keep = np.ones(len(i), dtype=bool)
    for axis in range(3):  # one column at a time: 1-D gathers are far faster than row gathers
        low, high = lo[:, axis].copy(), hi[:, axis].copy()
        apart = (low[i] > high[j]) | (low[j] > high[i])
        if axis == 2 and ignore_z is not None:
            apart &= ~(ignore_z[i] | ignore_z[j])
        keep &= ~apart
    return i[keep], j[keep]


def suggested_cell_size(lo: np.ndarray, hi: np.ndarray) -> float:
    """A cell about twice the median body footprint: few cells per body, few bodies per cell."""
    extent = np.max(hi[:, :2] - lo[:, :2], axis=1)
    extent = extent[np.isfinite(extent) & (extent > 0)]
    return float(2.0 * np.median(extent)) if extent.size else 1.0
