"""`Table`: a growable struct-of-arrays with stable integer handles and swap-remove.

Rows are dense (`0..size-1`) so every column is one contiguous NumPy view; handles never change
and are never reused, so a `SimObject` can keep its handle while rows move under it. The map
from handle to row (`HandleMap`) gives back the memory of handles long removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from fleetsim.errors import ObjectRemovedError
from fleetsim.state.handle_map import HandleMap

IntArray = NDArray[np.int64]


def rows_of(column: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`column[rows]` for a 2-D column: `take` copies whole rows several times faster (the
    method: `np.take` adds a microsecond of wrapping, which small fleets pay many times a step)."""
    picked: np.ndarray = column.take(rows, axis=0)
    return picked


_LINE = 64  # bytes in a cache line


def _nonzero(col: Column) -> bool:
    """Whether a column's default has a bit set (0, False and 0.0 have none; -0.0 has)."""
    return any(np.full(col.shape, col.default, dtype=col.dtype).tobytes())


@dataclass(frozen=True)
class Column:
    """One column: element dtype, per-row shape (e.g. (3,) for positions), default fill value."""

    dtype: DTypeLike
    shape: tuple[int, ...] = ()
    default: Any = 0


class Table:
    """Struct-of-arrays table.

    `table["pos"]` is a view of the live rows of a column, shape (size, *column.shape). Views are
    invalidated when the table grows: take them again after `add`.
    """

    def __init__(self, columns: Mapping[str, Column], capacity: int = 64) -> None:
        self._columns = dict(columns)
        self._capacity = max(1, capacity)
        self._size = 0
        self._data = {name: self._alloc(col, self._capacity) for name, col in self._columns.items()}
        # Columns whose default is zero bits, and the first row from which every row of them
        # is still the zeroed memory it was made with (`add` need not write it: untouched pages)
        self._zeros = {name for name, col in self._columns.items() if not _nonzero(col)}
        self._clean = 0
        self._views: dict[str, np.ndarray] = {}  # live-row views, until the size or data change
        self._row_to_handle = np.full(self._capacity, -1, dtype=np.int64)
        self._map = HandleMap()  # row of each handle issued
        self._base = 0  # handles below this were removed by a `clear`
        self.version = 0  # bumped when rows come or go, and by writers that need it noticed
        self.layout = 0  # bumped when rows move or go: rows looked up before stay valid till then

    @staticmethod
    def _alloc(col: Column, n: int) -> np.ndarray:
        """A column's array of n rows, filled with its default, from a 64-byte boundary (a
        cache line: a row of 64 bytes, or of a size that divides 64, never straddles two). A
        default of zero bits is the fresh zeroed memory's own: pages no row writes take no
        memory (a large fleet's attachment columns)."""
        dtype = np.dtype(col.dtype)
        shape = (n, *col.shape)
        size = int(np.prod(shape)) * dtype.itemsize
        raw = np.zeros(size + _LINE, dtype=np.uint8)
        start = -raw.ctypes.data % _LINE
        column: np.ndarray = raw[start : start + size].view(dtype).reshape(shape)
        if _nonzero(col):
            column[...] = col.default
        return column

    @property
    def size(self) -> int:
        """Number of live rows."""
        return self._size

    def __len__(self) -> int:
        return self._size

    @property
    def column_names(self) -> tuple[str, ...]:
        """The table's column names."""
        return tuple(self._columns)

    def __getitem__(self, name: str) -> np.ndarray:
        view = self._views.get(name)  # (a step reads columns dozens of times: no new views)
        if view is None:
            view = self._views[name] = self._data[name][: self._size]
        return view

    def views(self) -> dict[str, np.ndarray]:
        """Every column's live-row view by name (`table[name]` for each), valid until rows are
        added or removed: a hot loop reads columns from this dict without a call per read."""
        if len(self._views) != len(self._data):
            self._views = {name: data[: self._size] for name, data in self._data.items()}
        return self._views

    @property
    def handles(self) -> IntArray:
        """Handle of each live row, shape (size,)."""
        return self._row_to_handle[: self._size]

    def add(self, count: int = 1, **values: ArrayLike) -> IntArray:
        """Append `count` rows; `values` (broadcast to (count, *shape)) override column defaults.

        Returns the new handles, shape (count,). Validates every value before changing anything.
        """
        unknown = set(values) - set(self._columns)
        if unknown:
            raise KeyError(f"unknown table columns: {sorted(unknown)}")
        if count == 1:
            fast = self._add_one(values)
            if fast is not None:
                return fast
        prepared = {
            name: np.broadcast_to(
                np.asarray(v, dtype=self._columns[name].dtype), (count, *self._columns[name].shape)
            )
            for name, v in values.items()
        }
        self._reserve(self._size + count)
        start, stop = self._size, self._size + count
        for name, col in self._columns.items():
            given = prepared.get(name)
            if given is not None:
                self._data[name][start:stop] = given
            elif name not in self._zeros:
                self._data[name][start:stop] = col.default
            elif start < self._clean:  # (rows from `_clean` on are zero already)
                self._data[name][start : min(stop, self._clean)] = col.default
        self._clean = max(self._clean, stop)
        handles = self._map.issue(np.arange(start, stop, dtype=np.int64))
        self._row_to_handle[start:stop] = handles
        self._size = stop
        self._views = {}
        self.version += 1
        return handles

    def _add_one(self, values: dict[str, ArrayLike]) -> IntArray | None:
        """`add(1, ...)` without broadcasting (spawning robots one at a time).

        Returns None, leaving the table as it was, when a value needs broadcasting rules.
        """
        row = self._size
        self._reserve(row + 1)
        try:
            for name, col in self._columns.items():
                if name in values or row < self._clean or name not in self._zeros:
                    self._data[name][row] = values.get(name, col.default)
        except (ValueError, TypeError):
            self._clean = max(self._clean, row + 1)  # (written in part: no longer zero)
            return None  # the row is beyond `size`, so nothing is visible
        handle = self._map.issue_one(row)
        self._row_to_handle[row] = handle
        self._size = row + 1
        self._views = {}
        self.version += 1
        return np.array([handle], dtype=np.int64)

    def _reserve(self, n: int) -> None:
        if n <= self._capacity:
            return
        cap = max(n, 2 * self._capacity)
        for name, col in self._columns.items():
            grown = self._alloc(col, cap)
            grown[: self._size] = self._data[name][: self._size]
            self._data[name] = grown
        self._views = {}
        r2h = np.full(cap, -1, dtype=np.int64)
        r2h[: self._size] = self._row_to_handle[: self._size]
        self._row_to_handle = r2h
        self._capacity = cap
        self._clean = self._size  # (the new arrays' rows past the live ones are zeroed)

    def is_alive(self, handle: int) -> bool:
        """Whether `handle` names a row."""
        return self._base <= handle < self._map.issued and self._map.row(handle) >= 0

    def row(self, handle: int) -> int:
        """Row of a live handle; raises ObjectRemovedError for a removed or unknown one."""
        if self._base <= handle < self._map.issued:
            r = self._map.row(handle)
            if r >= 0:
                return r
        raise ObjectRemovedError(
            f"handle {handle} does not refer to a live body (removed or reset)"
        )

    def rows(self, handles: ArrayLike) -> IntArray:
        """Rows of live handles, shape like `handles`; raises ObjectRemovedError if any is dead."""
        h = np.asarray(handles, dtype=np.int64)
        low, top = (int(h.min()), int(h.max())) if h.size else (self._base, -1)
        if low < self._base or top >= self._map.issued:
            if low >= 0 and top < self._map.issued:
                raise ObjectRemovedError("some handles refer to bodies removed by a reset")
            raise ObjectRemovedError("some handles were never issued by this table")
        r = self._map.rows(h, top)
        if h.size and r.min() < 0:
            dead = h[r < 0][:5].tolist()
            raise ObjectRemovedError(f"handles {dead} refer to removed bodies")
        return r

    def remove(self, handle: int) -> None:
        """Remove a row by moving the last row into its place (O(columns))."""
        row = self.row(handle)
        last = self._size - 1
        if row != last:
            for arr in self._data.values():
                arr[row] = arr[last]
            moved_handle = self._row_to_handle[last]
            self._row_to_handle[row] = moved_handle
            self._map.move(int(moved_handle), row)
        self._row_to_handle[last] = -1
        self._map.remove(handle)
        self._size = last
        self._views = {}
        self.version += 1
        self.layout += 1

    def clear(self) -> None:
        """Remove every row. Old handles become dead; new handles keep counting up, and the
        handle map gives its memory back."""
        self._base = self._map.issued
        self._map.clear()
        self._row_to_handle[:] = -1
        self._size = 0
        self._views = {}
        self.version += 1
        self.layout += 1
