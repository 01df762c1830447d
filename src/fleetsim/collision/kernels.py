"""Compiled collision kernels (Numba, optional: `pip install "fleetsim[fast]"`; see
`fleetsim.jit`).

`grid_pairs` does in two passes what the NumPy broadphase does in twenty array operations: a
counting sort of the bodies by the cell of their lower corner (their boxes copied in that
order, so that neighbours are near in memory), then, cell by cell, the pairs within the cell
and with four of its eight neighbours (the other four see the same pairs from their side; cells
numbered down the columns make them two runs of the sorted bodies), kept when the boxes
overlap, sorted by (i, j) at the end. The scan runs in two halves of the columns on two
threads for a large fleet (`fleetsim.parallel`); with `query`, only the marked bodies look
round their cells (a check after a few bodies moved). `refresh_boxes` computes the world boxes
of the moved rows in place. Both are used from `MIN_BODIES` bodies or rows up.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from fleetsim import jit, parallel
from fleetsim.jit import MIN_ROWS, compiled

MIN_BODIES = MIN_ROWS  # fleets (or moved rows, for the box refresh) below this use NumPy
PLACE_AHEAD = 8  # bodies ahead whose place the counting sort asks for (`fleetsim.hints`)


def kernel() -> Callable[..., Any] | None:
    """The compiled grid (its first pass), or None without Numba."""
    return compiled(_count_cells)


def usable(n: int) -> bool:
    """Whether the kernel should take a broadphase of `n` bodies."""
    return (n >= MIN_BODIES or jit.eager()) and kernel() is not None


def dense_cell(x_span: float, y_span: float, count: int, cell: float) -> float:
    """A cell at least `cell` wide and large enough for about one body a cell over the bodies'
    extent (a sparse fleet on a fine grid would spend its time on empty cells)."""
    area = x_span * y_span
    return max(cell, (area / count) ** 0.5 if np.isfinite(area) else cell)


class _Workspace(threading.local):
    """The kernel's arrays, kept between calls and grown as needed: fresh arrays of this size
    would cost more in page faults than the kernel's own work. One set per thread, so that
    simulations stepped in different threads do not share them."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, size: int, dtype: Any, width: int = 0) -> np.ndarray:
        have = self.arrays.get(name)
        if have is None or len(have) < size:
            shape = (int(size * 1.5) + 16, width) if width else int(size * 1.5) + 16
            have = self.arrays[name] = np.empty(shape, dtype=dtype)
        return have


_workspace = _Workspace()


def narrow_bounds(
    lo: np.ndarray, hi: np.ndarray, cell: float, use: np.ndarray | None = None
) -> tuple[float, float, float, float, float, int] | None:
    """(widest xy extent, x min, x max, y min, y max of the lower corners, the inner axis) in
    one pass, when every box (marked in `use`, when given) is finite and no wider than `cell`
    (the usual fleet); None otherwise (the caller sorts the wide ones out with NumPy). The
    inner axis (0: x, 1: y) is the one along which bodies next to each other in the table
    step more (a fleet spawned along rows: x), for `grid_pairs` to number cells along it."""
    bounds = compiled(_narrow_bounds)
    assert bounds is not None
    out = np.empty(7)
    every = np.ones(len(lo), dtype=np.bool_) if use is None else use
    ok = bounds(
        np.ascontiguousarray(lo, dtype=np.float64),
        np.ascontiguousarray(hi, dtype=np.float64),
        float(cell),
        np.ascontiguousarray(every, dtype=np.bool_),
        out,
    )
    if not ok:
        return None
    inner = 0 if out[5] > out[6] else 1
    return float(out[0]), float(out[1]), float(out[2]), float(out[3]), float(out[4]), inner


def _narrow_bounds(lo: Any, hi: Any, cell: float, use: Any, out: Any) -> bool:
    widest, x0, x1, y0, y1 = 0.0, np.inf, -np.inf, np.inf, -np.inf
    step_x = step_y = 0.0  # how far bodies next to each other in the table are apart
    last = -1
    for a in range(lo.shape[0]):
        if not use[a]:
            continue
        extent = max(hi[a, 0] - lo[a, 0], hi[a, 1] - lo[a, 1])
        if not extent <= cell or not (np.isfinite(lo[a, 0]) and np.isfinite(lo[a, 1])):
            return False  # wide, NaN or infinite
        widest = max(widest, extent)
        x0, x1 = min(x0, lo[a, 0]), max(x1, lo[a, 0])
        y0, y1 = min(y0, lo[a, 1]), max(y1, lo[a, 1])
        if last >= 0:
            step_x += min(abs(lo[a, 0] - lo[last, 0]), cell)
            step_y += min(abs(lo[a, 1] - lo[last, 1]), cell)
        last = a
    out[0], out[1], out[2], out[3], out[4] = widest, x0, x1, y0, y1
    out[5], out[6] = step_x, step_y
    return True


def grid_pairs(
    lo: np.ndarray,
    hi: np.ndarray,
    use: np.ndarray,
    cell: float,
    ignore_z: np.ndarray,
    bounds: tuple[float, float, float, float] | None = None,
    query: np.ndarray | None = None,
    inner: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """(i < j) pairs, sorted, of the bodies marked in `use` (none wider than `cell`) whose
    boxes overlap (touching counts; z skipped where `ignore_z` marks either). The grid's cell
    is `cell` or larger (`dense_cell`). `bounds` (x min, x max, y min, y max of the used
    bodies' lower corners) when the caller knows them. With `query` (bool, N), only the pairs
    with a marked body: the grid is built as before, but only the marked bodies look round
    their cells (all eight neighbours), so a check after a few bodies moved costs the sort
    and a few lookups, not every pair of the site. Cells are numbered along the `inner` axis
    (1: y, down the columns; 0: x, along the rows), best the one along which bodies next to
    each other in the table step (`narrow_bounds` says which): then the sort's writes of a
    fleet standing in rows run in order. The pairs are the same either way."""
    n = len(lo)
    lo, hi = np.ascontiguousarray(lo, dtype=np.float64), np.ascontiguousarray(hi, dtype=np.float64)
    use = np.ascontiguousarray(use, dtype=np.bool_)
    flat = np.ascontiguousarray(ignore_z, dtype=np.bool_)
    if bounds is None:
        x, y = (lo[:, 0], lo[:, 1]) if use.all() else (lo[use, 0], lo[use, 1])  # views, usually
        if not len(x):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        bounds = (float(x.min()), float(x.max()), float(y.min()), float(y.max()))
        count = len(x)
    else:
        count = int(np.count_nonzero(use))
    x0, x1, y0, y1 = bounds if inner == 1 else (bounds[2], bounds[3], bounds[0], bounds[1])
    cell = dense_cell(x1 - x0, y1 - y0, count, cell)  # (x: the outer axis, y the inner one)
    floor = math.floor  # (the cells of the lowest and highest corners, as the kernel finds them)
    min_x, min_y = floor(x0 / cell), floor(y0 / cell)
    width, height = floor(x1 / cell) - min_x + 1, floor(y1 / cell) - min_y + 1
    w = _workspace
    work = (
        w.get("cell_of", n, np.int64),
        w.get("start", width * height + 1, np.int64)[: width * height + 1],
        w.get("body", n, np.int64),
        w.get("box", n, np.float64, 6),
        w.get("flat", n, np.bool_),
    )
    _sort_cells(lo, hi, use, float(cell), flat, work, (1 - inner, inner, min_x, min_y, height))
    cell_of, start, body, box, sorted_flat = work
    if query is None:
        columns = [(0, width)]
        if len(parallel.halves(count)) == 2:  # both cores: the columns behind half the bodies
            middle = int(np.searchsorted(start[: width * height + 1 : height], count // 2))
            columns = [(0, middle), (middle, width)] if 0 < middle < width else columns
        scan = compiled(_grid_scan)
        assert scan is not None
        grid = (width, height, start, body, box, sorted_flat)
        parts = [(a, b, int(start[b * height] - start[a * height])) for a, b in columns]
        found = parallel.run(
            [functools.partial(_room, scan, (a, b, *grid), bodies) for a, b, bodies in parts]
        )
    else:
        ask = compiled(_grid_query)
        assert ask is not None
        marked = np.ascontiguousarray(query, dtype=np.bool_)
        around = (cell_of, width, height, start, body, box, sorted_flat)
        asked = int(np.count_nonzero(marked))
        found = [_room(ask, (lo, hi, use, marked, flat, *around), asked)]
    if len(found) == 1:
        out_i, out_j, pairs = found[0]
    else:
        out_i = np.concatenate([i[:c] for i, _, c in found])
        out_j = np.concatenate([j[:c] for _, j, c in found])
        pairs = len(out_i)
    sort = compiled(_sort_pairs)
    assert sort is not None
    sorted_i, sorted_j = np.empty(pairs, dtype=np.int64), np.empty(pairs, dtype=np.int64)
    ranges = [(0, n, 0)]  # (first body, last body + 1, where their pairs start)
    if len(parallel.halves(pairs)) == 2:  # both cores: the pairs of each half of the bodies
        base = int(np.count_nonzero(out_i[:pairs] < n // 2))
        ranges = [(0, n // 2, 0), (n // 2, n, base)]

    def part(first: int, stop: int, base: int) -> None:
        firsts = _workspace.get("firsts", stop - first + 1, np.int64)[: stop - first + 1]
        sort(out_i, out_j, pairs, first, stop, base, firsts, sorted_i, sorted_j)

    parallel.run([functools.partial(part, *r) for r in ranges])
    return sorted_i, sorted_j


def _sort_cells(
    lo: np.ndarray,
    hi: np.ndarray,
    use: np.ndarray,
    cell: float,
    ignore_z: np.ndarray,
    work: tuple[np.ndarray, ...],
    grid: tuple[int, int, int, int, int],
) -> None:
    """The grid's first pass: a counting sort of the used bodies by the cell of their lower
    corner into `work` (cell_of, start, body, box, flat: `start[c]` the first of cell
    c's bodies, cells numbered along the inner axis, each cell's bodies in index order, their
    boxes copied beside them; `grid`: the outer and inner axes, the first cell along each and
    the cells along the inner one). A large fleet counts and places each half of the bodies on
    its own thread (the second half's bodies after the first's in every cell: the same order)."""
    count, prefix = compiled(_count_cells), compiled(_offsets)
    scatter = jit.compiled_prefetching(globals(), _place_cells)
    assert count is not None and scatter is not None and prefix is not None
    cell_of, start, body, box, flat = work
    cells, parts = start.shape[0] - 1, parallel.halves(len(lo))
    hists = [_workspace.get(f"hist{k}", cells + 1, np.int64)[: cells + 1] for k in range(2)]
    parallel.run(
        [
            functools.partial(count, lo, use, cell, *grid, a, b, cell_of, hist)
            for (a, b), hist in zip(parts, hists, strict=False)
        ]
    )
    offsets = [_workspace.get(f"offset{k}", cells, np.int64)[:cells] for k in range(2)]
    prefix(hists[0], hists[1], len(parts) == 2, start, offsets[0], offsets[1])
    placed = (body, box, flat)
    parallel.run(
        [
            functools.partial(scatter, lo, hi, ignore_z, use, cell_of, a, b, at, *placed)
            for (a, b), at in zip(parts, offsets, strict=False)
        ]
    )


def _count_cells(
    lo: Any,
    use: Any,
    cell: float,
    outer: int,
    inner: int,
    min_x: int,
    min_y: int,
    height: int,
    first: int,
    stop: int,
    cell_of: Any,
    hist: Any,
) -> None:
    """Bodies first..stop-1: their cells, and how many are in each (`hist[c + 1]`); x along
    the `outer` axis, y along the `inner` one."""
    hist[:] = 0
    for a in range(first, stop):
        if use[a]:
            cx = np.int64(np.floor(lo[a, outer] / cell))
            cy = np.int64(np.floor(lo[a, inner] / cell))
            c = (cx - min_x) * height + (cy - min_y)
            cell_of[a] = c
            hist[c + 1] += 1


def _offsets(
    first: Any, second: Any, both: bool, start: Any, at_first: Any, at_second: Any
) -> None:
    """Where each cell's bodies start (`start`, one more slot than cells), and where the first
    and the second half's bodies go in each cell."""
    start[0] = 0
    for c in range(at_first.shape[0]):
        mine = first[c + 1]
        theirs = second[c + 1] if both else 0
        at_first[c] = start[c]
        at_second[c] = start[c] + mine
        start[c + 1] = start[c] + mine + theirs


def _place_cells(
    lo: Any,
    hi: Any,
    ignore_z: Any,
    use: Any,
    cell_of: Any,
    first: int,
    stop: int,
    at: Any,
    body: Any,
    box: Any,
    flat: Any,
) -> None:
    """Bodies first..stop-1 into their cells' places (`at[c]` moves on), boxes beside them
    (each place asked for `PLACE_AHEAD` bodies before: the places jump about)."""
    for a in range(first, stop):
        soon = a + PLACE_AHEAD
        if soon < stop and use[soon]:
            prefetch_write(box, at[cell_of[soon]])
        if use[a]:
            k = at[cell_of[a]]
            at[cell_of[a]] += 1
            body[k] = a
            for axis in range(3):
                box[k, axis] = lo[a, axis]
                box[k, 3 + axis] = hi[a, axis]
            flat[k] = ignore_z[a]


def prefetch_write(array: Any, row: int) -> None:
    """A placeholder: `jit.compiled_prefetching` puts `fleetsim.hints.prefetch_write` here."""


def _room(
    scan: Callable[..., int], args: tuple[Any, ...], n: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """(out_i, out_j, count) of `scan(*args, out_i, out_j)`, which writes the pairs of `n`
    bodies into the arrays it is given (this thread's, room for four pairs a body, grown as
    needed): once more with room for them all when they did not fit."""
    capacity, w = 4 * n + 16, _workspace
    while True:
        out_i, out_j = w.get("out_i", capacity, np.int64), w.get("out_j", capacity, np.int64)
        count = scan(*args, out_i, out_j)
        if count <= len(out_i):
            return out_i, out_j, count
        capacity = count


def _sort_pairs(
    out_i: Any,
    out_j: Any,
    count: int,
    first: int,
    stop: int,
    base: int,
    firsts: Any,
    sorted_i: Any,
    sorted_j: Any,
) -> None:
    """Of the first `count` pairs, those of bodies first..stop-1 (as i), sorted by (i, j) into
    sorted_i/sorted_j from `base` on: a counting sort by i (each body has a few pairs), then
    each body's few j in order by insertion. `firsts` has stop - first + 1 slots."""
    firsts[:] = 0
    for k in range(count):
        a = out_i[k]
        if first <= a < stop:
            firsts[a - first + 1] += 1
    firsts[0] = base
    for a in range(firsts.shape[0] - 1):
        firsts[a + 1] += firsts[a]
    for k in range(count):
        a = out_i[k]
        if first <= a < stop:
            at = firsts[a - first]
            firsts[a - first] += 1
            sorted_i[at], sorted_j[at] = a, out_j[k]
    begin = base
    for a in range(firsts.shape[0] - 1):  # firsts[a] is the end of body a's pairs now
        end = firsts[a]
        for k in range(begin + 1, end):
            j = sorted_j[k]
            m = k - 1
            while m >= begin and sorted_j[m] > j:
                sorted_j[m + 1] = sorted_j[m]
                m -= 1
            sorted_j[m + 1] = j
        begin = end


def _grid_scan(
    x_from: int,
    x_to: int,
    width: int,
    height: int,
    start: Any,
    body: Any,
    box: Any,
    flat: Any,
    out_i: Any,
    out_j: Any,
) -> int:
    """Every overlapping pair with a body in the columns x_from..x_to, written to
    out_i/out_j; returns how many there are (when more than fit, only the count is right:
    the caller calls again with room). Each pair once: within a cell, and with the cells at
    +y, +x-y, +x and +x+y; cells are numbered down the columns, so those are two runs of the
    sorted bodies: the rest of this cell with the one above, and the next column's three."""
    room, count = out_i.shape[0], 0
    for x in range(x_from, x_to):
        for y in range(height):
            c = x * height + y
            top = start[c + 2] if y + 1 < height else start[c + 1]
            r0 = r1 = 0
            if x + 1 < width:
                r0 = start[(x + 1) * height + max(y - 1, 0)]
                r1 = start[(x + 1) * height + min(y + 1, height - 1) + 1]
            for ka in range(start[c], start[c + 1]):
                a, flat_a = body[ka], flat[ka]  # (its box in locals: read once, not per pair)
                x0, y0, z0 = box[ka, 0], box[ka, 1], box[ka, 2]
                x1, y1, z1 = box[ka, 3], box[ka, 4], box[ka, 5]
                for kb in range(ka + 1, top):
                    # (without branches: about half the tests fail, unpredictably)
                    apart = (x0 > box[kb, 3]) | (box[kb, 0] > x1)
                    apart |= (y0 > box[kb, 4]) | (box[kb, 1] > y1)
                    apart |= ~(flat_a | flat[kb]) & ((z0 > box[kb, 5]) | (box[kb, 2] > z1))
                    if count < room:
                        b = body[kb]
                        out_i[count], out_j[count] = min(a, b), max(a, b)
                    count += ~apart
                for kb in range(r0, r1):  # (the same test, written twice: one loop each run)
                    apart = (x0 > box[kb, 3]) | (box[kb, 0] > x1)
                    apart |= (y0 > box[kb, 4]) | (box[kb, 1] > y1)
                    apart |= ~(flat_a | flat[kb]) & ((z0 > box[kb, 5]) | (box[kb, 2] > z1))
                    if count < room:
                        b = body[kb]
                        out_i[count], out_j[count] = min(a, b), max(a, b)
                    count += ~apart
    return count


def _grid_query(
    lo: Any,
    hi: Any,
    use: Any,
    query: Any,
    ignore_z: Any,
    cell_of: Any,
    width: int,
    height: int,
    start: Any,
    body: Any,
    box: Any,
    flat: Any,
    out_i: Any,
    out_j: Any,
) -> int:
    """The overlapping pairs with a `query` body: the marked bodies round their cells (the
    three runs of the three columns about them), a pair of two marked ones once; returns
    the count as `_grid_scan` does."""
    room, count = out_i.shape[0], 0
    for a in range(lo.shape[0]):
        if not (use[a] and query[a]):
            continue
        x, y = cell_of[a] // height, cell_of[a] % height
        for x2 in range(max(x - 1, 0), min(x + 2, width)):
            c0 = x2 * height + max(y - 1, 0)
            c1 = x2 * height + min(y + 1, height - 1)
            for kb in range(start[c0], start[c1 + 1]):
                b = body[kb]
                if b == a or (query[b] and b < a):
                    continue
                apart = (lo[a, 0] > box[kb, 3]) | (box[kb, 0] > hi[a, 0])
                apart |= (lo[a, 1] > box[kb, 4]) | (box[kb, 1] > hi[a, 1])
                apart |= ~(ignore_z[a] | flat[kb]) & (
                    (lo[a, 2] > box[kb, 5]) | (box[kb, 2] > hi[a, 2])
                )
                if count < room:
                    out_i[count], out_j[count] = min(a, b), max(a, b)
                count += ~apart
    return count


def refresh_boxes(
    rows: np.ndarray,
    pos: np.ndarray,
    quat: np.ndarray,
    local_min: np.ndarray,
    local_max: np.ndarray,
    out_min: np.ndarray,
    out_max: np.ndarray,
    moved: np.ndarray,
    unchecked: np.ndarray,
    level_kind: np.ndarray,
    level_box: np.ndarray,
) -> bool:
    """World boxes of `rows` written in place into out_min/out_max (N, 3), as
    `fleetsim.collision.aabb.world_aabbs` computes them, the same arithmetic in the same order
    (equal to the last bit), in one pass with no gathered copies; the rows' `moved` marks
    cleared and `unchecked` ones set on the way, and the boxes as the narrow phase tests them
    (`level_kind`, `level_box`: the body table's columns, `fleetsim.collision.box_pairs`'s
    numbers) worked out from the same reads. False (nothing done) without Numba or when an
    array is not a contiguous float64 (N, 3) / (N, 4) / (N, 8) one."""
    refresh = compiled(_refresh_boxes)
    arrays = (pos, quat, local_min, local_max, out_min, out_max, level_box)
    if refresh is None or not all(a.dtype == np.float64 and a.flags.c_contiguous for a in arrays):
        return False
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    marks = (moved, unchecked, level_kind)
    parallel.run(
        [
            functools.partial(refresh, rows[a:b], *arrays, *marks)
            for a, b in parallel.halves(len(rows), parallel.ROW_KERNEL_ROWS)
        ]
    )
    return True


def _refresh_boxes(
    rows: Any,
    pos: Any,
    quat: Any,
    local_min: Any,
    local_max: Any,
    out_min: Any,
    out_max: Any,
    level_box: Any,
    moved: Any,
    unchecked: Any,
    level_kind: Any,
) -> None:
    for k in range(rows.shape[0]):
        r = rows[k]
        moved[r], unchecked[r] = False, True
        x, y, z, w = quat[r, 0], quat[r, 1], quat[r, 2], quat[r, 3]
        x2, y2, z2 = 2 * x, 2 * y, 2 * z
        xx, yy, zz = x * x2, y * y2, z * z2
        xy, xz, yz = x * y2, x * z2, y * z2
        wx, wy, wz = w * x2, w * y2, w * z2
        m = (
            (1 - yy - zz, xy - wz, xz + wy),
            (xy + wz, 1 - xx - zz, yz - wx),
            (xz - wy, yz + wx, 1 - xx - yy),
        )
        c0 = (local_min[r, 0] + local_max[r, 0]) * 0.5
        c1 = (local_min[r, 1] + local_max[r, 1]) * 0.5
        c2 = (local_min[r, 2] + local_max[r, 2]) * 0.5
        h0 = (local_max[r, 0] - local_min[r, 0]) * 0.5
        h1 = (local_max[r, 1] - local_min[r, 1]) * 0.5
        h2 = (local_max[r, 2] - local_min[r, 2]) * 0.5
        for i in range(3):
            centre = pos[r, i] + (m[i][0] * c0 + m[i][1] * c1 + m[i][2] * c2)
            half = abs(m[i][0]) * h0 + abs(m[i][1]) * h1 + abs(m[i][2]) * h2
            out_min[r, i] = centre - half
            out_max[r, i] = centre + half
        if x == 0.0 and y == 0.0:  # level: box_pairs' plane box (x * 0.5 is x / 2, exactly)
            level_kind[r] = 0 if z == 0.0 else 1
            cos, sin = 1 - z * (2 * z), w * (2 * z)
            level_box[r, 0], level_box[r, 1] = cos, sin
            level_box[r, 2] = pos[r, 0] + (cos * c0 - sin * c1)
            level_box[r, 3] = pos[r, 1] + (sin * c0 + cos * c1)
            level_box[r, 4] = pos[r, 2] + c2
            level_box[r, 5], level_box[r, 6], level_box[r, 7] = h0, h1, h2
        else:
            level_kind[r] = 2
