"""`StaticIndex`: the boxes of static bodies hashed once by the xy cells they cover, so a check
pairs the moving bodies with the structure near them instead of with all of it.

A site's walls, racks or grid-map rectangles (tens of thousands) do not move: hashing them every
step, or testing the long ones against every robot, would cost more than the robots themselves.
The index is rebuilt only when the static boxes or the cell size change. Each entry is one
(cell, box), for every cell a moving box's lower corner can be in while the two overlap; a query
looks each moving box's lower-corner cell up in the sorted keys, so every pair comes once.
Moving boxes wider than a cell are paired with every static box, and static boxes covering more
than `MAX_CELLS` cells (a floor, a huge or unbounded box) with every moving body.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim import jit
from fleetsim.collision.broadphase import overlapping
from fleetsim.geometry.vectors import ramp
from fleetsim.jit import MIN_ROWS, compiled

IntArray = np.ndarray

MAX_CELLS = 1024  # a static box covering more cells is paired with every moving body


class StaticIndex:
    """A grid over the static bodies' boxes, built once (and again when they change), that finds the
    static bodies near moving ones."""

    def __init__(self) -> None:
        self._lo = np.empty((0, 3))
        self._hi = np.empty((0, 3))
        self._rows = np.empty(0, dtype=np.int64)
        self.cell = 0.0
        self.builds = 0
        self._keys = np.empty(0, dtype=np.int64)
        self._boxes = np.empty(0, dtype=np.int64)  # positions in `_rows`, sorted with `_keys`
        self._huge = np.empty(0, dtype=np.int64)
        self._table: np.ndarray | None = None  # (2, cells): start and count of each cell
        self._origin = (0, 0)
        self._shape = (0, 0)

    def pairs(
        self, lo: np.ndarray, hi: np.ndarray, moving: IntArray, fixed: IntArray, cell: float
    ) -> tuple[IntArray, IntArray]:
        """Row pairs (moving row, static row) whose boxes may overlap, each pair once:
        candidates for an overlap test. `lo`, `hi` are every row's box; `moving`, `fixed`
        the rows; moving boxes no wider than `cell` are looked up by one cell each."""
        self._update(lo[fixed], hi[fixed], fixed, cell)
        empty = np.empty(0, dtype=np.int64)
        if moving.size == 0 or fixed.size == 0:
            return empty, empty
        lo_m, hi_m = lo[moving], hi[moving]
        extent = np.maximum(hi_m[:, 0] - lo_m[:, 0], hi_m[:, 1] - lo_m[:, 1])
        narrow = extent <= cell  # NaN and inf count as wide
        first = np.floor(lo_m[narrow, :2] / cell).astype(np.int64)
        m, s = self._lookup(np.flatnonzero(narrow), first)
        wide = np.flatnonzero(~narrow)
        if wide.size:  # few, if any: against every static box
            m = np.concatenate((m, np.repeat(wide, fixed.size)))
            s = np.concatenate((s, np.tile(np.arange(fixed.size), wide.size)))
        if self._huge.size:
            m = np.concatenate((m, np.repeat(np.flatnonzero(narrow), self._huge.size)))
            s = np.concatenate((s, np.tile(self._huge, int(narrow.sum()))))
        return moving[m], fixed[s]

    def overlaps(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        moving: IntArray,
        fixed: IntArray,
        cell: float,
        ignore_z: np.ndarray | None = None,
    ) -> tuple[IntArray, IntArray]:
        """The (moving row, static row) pairs whose boxes overlap (touching counts; z skipped
        where `ignore_z` marks either): `pairs`, then the overlap test. From `MIN_ROWS`
        moving rows (`jit.enough`) with Numba, the usual case (narrow moving boxes, the dense
        table) is looked up and tested in one compiled pass."""
        kernel = compiled(_lookup_overlapping) if jit.enough(moving.size, MIN_ROWS) else None
        if kernel is None:
            return overlapping(lo, hi, *self.pairs(lo, hi, moving, fixed, cell), ignore_z)
        self._update(lo[fixed], hi[fixed], fixed, cell)
        if self._table is None or moving.size == 0 or fixed.size == 0:
            return overlapping(lo, hi, *self.pairs(lo, hi, moving, fixed, cell), ignore_z)
        flat = np.zeros(len(lo), dtype=np.bool_) if ignore_z is None else ignore_z
        lo, hi = (
            np.ascontiguousarray(lo, dtype=np.float64),
            np.ascontiguousarray(hi, dtype=np.float64),
        )
        wide = np.empty(moving.size, dtype=np.bool_)
        room = 4 * moving.size + 16
        while True:
            out_m, out_s = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
            count = kernel(
                lo,
                hi,
                np.ascontiguousarray(moving, dtype=np.int64),
                np.ascontiguousarray(flat, dtype=np.bool_),
                float(cell),
                self._origin[0],
                self._origin[1],
                self._shape[0],
                self._shape[1],
                self._table,
                self._boxes,
                np.ascontiguousarray(fixed, dtype=np.int64),
                wide,
                out_m,
                out_s,
            )
            if count <= room:
                break
            room = count
        m, s = out_m[:count], out_s[:count]
        extra_m, extra_s = [], []
        if wide.any():  # few, if any: against every static box
            w = moving[wide]
            extra_m.append(np.repeat(w, fixed.size))
            extra_s.append(np.tile(fixed, w.size))
        if self._huge.size:
            narrow = moving[~wide]
            extra_m.append(np.repeat(narrow, self._huge.size))
            extra_s.append(np.tile(fixed[self._huge], narrow.size))
        if extra_m:
            em, es = overlapping(lo, hi, np.concatenate(extra_m), np.concatenate(extra_s), ignore_z)
            m, s = np.concatenate((m, em)), np.concatenate((s, es))
        return m, s

    def _update(self, lo: np.ndarray, hi: np.ndarray, rows: IntArray, cell: float) -> None:
        """Rebuild when the static rows, their boxes or the cell size changed. A box is
        entered in every cell a moving box's lower corner can be in while the two overlap:
        the cells it covers and one more below and to the left (moving boxes are no wider
        than a cell)."""
        if (
            cell == self.cell
            and np.array_equal(rows, self._rows)
            and np.array_equal(lo, self._lo)
            and np.array_equal(hi, self._hi)
        ):
            return
        self._lo, self._hi, self._rows, self.cell = lo.copy(), hi.copy(), rows.copy(), cell
        self.builds += 1
        first = np.floor(lo[:, :2] / cell) - 1
        span = np.floor(hi[:, :2] / cell) - first + 1
        with np.errstate(invalid="ignore", over="ignore"):
            count = span[:, 0] * span[:, 1]
        hashed = np.isfinite(count) & (count <= MAX_CELLS)
        self._huge = np.flatnonzero(~hashed)
        box = np.flatnonzero(hashed)
        nx = span[box, 0].astype(np.int64)
        per_box = nx * span[box, 1].astype(np.int64)
        k = ramp(per_box)
        entry = np.repeat(np.arange(box.size), per_box)
        x = first[box, 0].astype(np.int64)[entry] + k % nx[entry]
        y = first[box, 1].astype(np.int64)[entry] + k // nx[entry]
        keys = _key(x, y)
        order = np.argsort(keys, kind="stable")
        self._keys, self._boxes = keys[order], box[entry[order]]
        self._table = None
        if x.size:  # most sites: a dense table of the cells' runs, one gather per query
            self._origin = (int(x.min()), int(y.min()))
            self._shape = (int(x.max()) - self._origin[0] + 1, int(y.max()) - self._origin[1] + 1)
            if self._shape[0] * self._shape[1] <= 8 * x.size + 65536:
                dense = (x - self._origin[0]) * self._shape[1] + (y - self._origin[1])
                count = np.bincount(dense, minlength=self._shape[0] * self._shape[1])
                self._table = np.stack((np.cumsum(count) - count, count))
                self._boxes = box[entry[np.argsort(dense, kind="stable")]]

    def _lookup(self, query: IntArray, cells: IntArray) -> tuple[IntArray, IntArray]:
        """(query, box) for every static entry in each query's cell (`cells` (Q, 2))."""
        if not self._keys.size:
            return query[:0], query[:0]
        if self._table is not None:
            cx, cy = cells[:, 0] - self._origin[0], cells[:, 1] - self._origin[1]
            inside = (cx >= 0) & (cx < self._shape[0]) & (cy >= 0) & (cy < self._shape[1])
            query, slot = query[inside], cx[inside] * self._shape[1] + cy[inside]
            start, count = self._table[0, slot], self._table[1, slot]
        else:
            key = _key(cells[:, 0], cells[:, 1])
            start = np.searchsorted(self._keys, key, side="left")
            count = np.searchsorted(self._keys, key, side="right") - start
        return np.repeat(query, count), self._boxes[np.repeat(start, count) + ramp(count)]


def _key(x: IntArray, y: IntArray) -> IntArray:
    key: IntArray = (x << 32) + (y & 0xFFFFFFFF)
    return key


def _lookup_overlapping(
    lo: Any,
    hi: Any,
    moving: Any,
    flat: Any,
    cell: float,
    ox: int,
    oy: int,
    nx: int,
    ny: int,
    table: Any,
    boxes: Any,
    fixed: Any,
    wide: Any,
    out_m: Any,
    out_s: Any,
) -> int:
    """`StaticIndex.pairs` through the dense table and `overlapping`, in one pass; moving boxes
    wider than a cell (or not finite) are marked in `wide` for the caller. Returns the pair
    count (when more than fit, only the count is right: the caller calls again)."""
    room, count = out_m.shape[0], 0
    for k in range(moving.shape[0]):
        a = moving[k]
        extent = max(hi[a, 0] - lo[a, 0], hi[a, 1] - lo[a, 1])
        wide[k] = not extent <= cell  # (NaN and inf count as wide)
        if wide[k]:
            continue
        cx = np.int64(np.floor(lo[a, 0] / cell)) - ox
        cy = np.int64(np.floor(lo[a, 1] / cell)) - oy
        if cx < 0 or cx >= nx or cy < 0 or cy >= ny:
            continue
        slot = cx * ny + cy
        for e in range(table[0, slot], table[0, slot] + table[1, slot]):
            b = fixed[boxes[e]]
            apart = (lo[a, 0] > hi[b, 0]) | (lo[b, 0] > hi[a, 0])
            apart |= (lo[a, 1] > hi[b, 1]) | (lo[b, 1] > hi[a, 1])
            apart |= ~(flat[a] | flat[b]) & ((lo[a, 2] > hi[b, 2]) | (lo[b, 2] > hi[a, 2]))
            if not apart:
                if count < room:
                    out_m[count], out_s[count] = a, b
                count += 1
    return count
