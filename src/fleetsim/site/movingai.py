"""MovingAI grid maps (`.map`, as used by MAPF benchmarks): a graph over free cells and the
blocked cells merged into rectangles (one static body each, not one per cell).

Format: a header `type octile`, `height H`, `width W`, `map`, then H rows of W characters;
`.`, `G`, `S`, `E` are free, `@`, `O`, `T`, `W` blocked. Cell (row r, column c) has its centre
at x = (c + 0.5) * cell_size, y = (H - r - 0.5) * cell_size: row 0 is the top of the map, and
the map lies in the positive quadrant with y up. Nodes are named "r<row>_c<col>"; free cells
are joined to their free 4-neighbours by two-way lanes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.memory import check_site_fits
from fleetsim.site.graph import NavGraph

FREE, BLOCKED = ".GSE", "@OTW"
_NAME = re.compile(r"r(\d+)_c(\d+)")


class CellNames(Sequence[str]):
    """Lazy node names of a grid's free cells ("r<row>_c<col>"), with `lookup`."""

    def __init__(self, width: int, cells: np.ndarray, node_of_cell: np.ndarray) -> None:
        self.width, self.cells, self.node_of_cell = width, cells, node_of_cell

    def __len__(self) -> int:
        return len(self.cells)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        row, col = divmod(int(self.cells[k]), self.width)
        return f"r{row}_c{col}"

    def lookup(self, name: str) -> int | None:
        """The node index of a cell's name ("r<row>_c<col>"), or None for no free cell."""
        match = _NAME.fullmatch(name)
        if match is None:
            return None
        row, col = int(match[1]), int(match[2])
        if col >= self.width or row * self.width + col >= len(self.node_of_cell):
            return None
        node = int(self.node_of_cell[row * self.width + col])
        return node if node >= 0 else None

    def explain(self, name: str) -> str:
        """Why `name` is not a node (it failed `lookup`)."""
        height = len(self.node_of_cell) // self.width
        match = _NAME.fullmatch(name)
        if match is None:
            return f"unknown node '{name}': grid map nodes are named r<row>_c<col>, like r0_c0"
        row, col = int(match[1]), int(match[2])
        if row >= height or col >= self.width:
            return f"cell '{name}' is outside the map ({height} rows x {self.width} columns)"
        return f"cell '{name}' is blocked: choose a free cell"


@dataclass
class GridMap:
    """A loaded grid map: its graph, the blocked mask (height, width), and the obstacle
    rectangles (K, 4) as [x_min, y_min, x_max, y_max] in metres; `origin` (x, y) is the lower
    left corner of the map's last row (0, 0 for a MovingAI file)."""

    graph: NavGraph
    blocked: np.ndarray
    rectangles: np.ndarray
    cell_size: float
    origin: tuple[float, float] = (0.0, 0.0)

    @property
    def height(self) -> int:
        """Rows of the map."""
        return int(self.blocked.shape[0])

    @property
    def width(self) -> int:
        """Columns of the map."""
        return int(self.blocked.shape[1])

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the cell containing (x, y)."""
        x, y = x - self.origin[0], y - self.origin[1]
        return self.height - 1 - int(y // self.cell_size), int(x // self.cell_size)


def load_movingai(path: str | Path, cell_size: float = 1.0, blocked: str = "") -> GridMap:
    """Read a `.map` file; errors name the file and the line. `blocked` adds characters that
    count as blocked, for maps that mark shelves or stations with their own letters."""
    if not (cell_size > 0 and np.isfinite(cell_size)):
        raise ConfigError(f"cell_size must be > 0 m, got {cell_size!r}")
    if not isinstance(blocked, str) or not blocked.isascii() or not blocked.isprintable():
        raise ConfigError(f"blocked must be printable ASCII characters, got {blocked!r}")
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"grid map not found: {path}")
    lines = file.read_text(errors="replace").splitlines()
    height, width, first = _header(file, lines)
    rows = lines[first : first + height]
    if len(rows) != height:
        raise ConfigError(
            f"{file}: the header says height {height}, but there are {len(rows)} rows"
        )
    for k, row in enumerate(rows):
        if len(row.rstrip("\r")) != width:
            raise ConfigError(
                f"{file} line {first + k + 1}: row {k} has {len(row)} cells, the header says "
                f"width {width}"
            )
    chars = np.frombuffer("".join(r.rstrip("\r") for r in rows).encode("latin-1"), np.uint8)
    free_chars = "".join(c for c in FREE if c not in blocked)
    free = np.isin(chars, np.frombuffer(free_chars.encode(), np.uint8))
    wall = np.isin(chars, np.frombuffer((BLOCKED + blocked).encode(), np.uint8))
    unknown = np.flatnonzero(~(free | wall))
    if unknown.size:
        bad_row, bad_col = divmod(int(unknown[0]), width)
        char = chr(chars[unknown[0]])
        raise ConfigError(
            f"{file} line {first + bad_row + 1}: unknown cell '{char}' at column {bad_col} "
            f"(free: {free_chars}, blocked: {BLOCKED}{blocked}); if '{char}' marks an obstacle, "
            f"pass blocked='{char}' (`blocked: {char}` in a scenario's site, --blocked {char})"
        )
    check_site_fits(int(np.count_nonzero(free)), f"{file} ({height} x {width})")
    if not free.any():
        raise ConfigError(
            f"{file}: no free cell (every cell is blocked: {BLOCKED}{blocked}); "
            f"robots need free cells ({free_chars}) to drive on"
        )
    graph = _graph(free, height, width, cell_size)
    mask = wall.reshape(height, width)
    return GridMap(graph, mask, _rectangles(mask, cell_size), cell_size)


def grid_from_mask(
    blocked: np.ndarray, cell_size: float, origin: tuple[float, float], what: str
) -> GridMap:
    """A grid map from a blocked mask (height, width; row 0 at the top, as a MovingAI file's)
    whose last row's lower left corner is at `origin` (metres): the free cells' graph and the
    blocked cells' rectangles, both placed there. `what` names the source in errors."""
    height, width = blocked.shape
    free = ~blocked.ravel()
    check_site_fits(int(np.count_nonzero(free)), f"{what} ({height} x {width})")
    if not free.any():
        raise ConfigError(f"{what}: no free cell (every cell is blocked)")
    graph = _graph(free, height, width, cell_size, origin)
    rectangles = _rectangles(blocked, cell_size) + np.array([*origin, *origin])
    return GridMap(graph, blocked, rectangles, cell_size, (float(origin[0]), float(origin[1])))


def _header(file: Path, lines: list[str]) -> tuple[int, int, int]:
    values: dict[str, str] = {}
    for k, line in enumerate(lines[:10]):
        words = line.split()
        if words == ["map"]:
            if "height" not in values or "width" not in values:
                raise ConfigError(f"{file}: the header needs 'height' and 'width' before 'map'")
            try:
                height, width = int(values["height"]), int(values["width"])
            except ValueError:
                raise ConfigError(f"{file}: height and width must be whole numbers") from None
            if height <= 0 or width <= 0:
                raise ConfigError(f"{file}: height and width must be > 0")
            return height, width, k + 1
        if len(words) == 2:
            values[words[0]] = words[1]
    raise ConfigError(
        f"{file}: not a MovingAI map (expected 'type octile', 'height H', 'width W', 'map')"
    )


def _graph(
    free: np.ndarray,
    height: int,
    width: int,
    cell_size: float,
    origin: tuple[float, float] = (0.0, 0.0),
) -> NavGraph:
    """Free cells and the lanes to their right and lower free neighbours, in 4-byte indices,
    each temporary let go before the next is made (a big map's peak is its graph)."""
    cells = np.flatnonzero(free).astype(np.int32 if free.size < 2**31 else np.int64)
    node_of_cell = np.full(free.size, -1, dtype=cells.dtype)
    node_of_cell[cells] = np.arange(len(cells), dtype=cells.dtype)
    xy = np.empty((len(cells), 2))
    xy[:, 0] = cells % width
    xy[:, 1] = height - 1 - cells // width
    xy += 0.5
    xy *= cell_size
    xy += origin
    last = free.size - 1
    right = cells[(cells % width < width - 1) & free[np.minimum(cells + 1, last)]]
    down = cells[(cells < last - width + 1) & free[np.minimum(cells + width, last)]]
    src = np.concatenate((node_of_cell[right], node_of_cell[down]))
    right += 1
    down += width
    dst = np.concatenate((node_of_cell[right], node_of_cell[down]))
    del right, down
    names = CellNames(width, cells, node_of_cell)
    return NavGraph(names, xy, src, dst, bidirectional=np.ones(len(src), dtype=bool))


def _rectangles(blocked: np.ndarray, cell_size: float) -> np.ndarray:
    """Blocked cells as few rectangles: runs along each row, stacked while the next row has
    exactly the same run. Returns (K, 4) [x_min, y_min, x_max, y_max] in metres."""
    height, width = blocked.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = blocked
    edges = np.diff(padded, axis=1)
    run_rows, run_starts = np.nonzero(edges == 1)
    _, run_ends = np.nonzero(edges == -1)  # row-major order, like the starts
    out: list[tuple[int, int, int, int]] = []  # (first row, col0, last row, col1 exclusive)
    open_runs: dict[tuple[int, int], int] = {}  # runs of the previous row -> their first row
    previous_row = -2
    bounds = np.flatnonzero(np.diff(run_rows)) + 1
    for rows, starts, ends in zip(
        np.split(run_rows, bounds),
        np.split(run_starts, bounds),
        np.split(run_ends, bounds),
        strict=True,
    ):
        if rows.size == 0:
            continue
        row = int(rows[0])
        carried = open_runs if row == previous_row + 1 else {}
        current = {}
        for key in zip(starts.tolist(), ends.tolist(), strict=True):
            current[key] = carried.pop(key, row)
        # What is left of the previous row's runs (all of them after a gap) ends there.
        out += [(first, a, previous_row, b) for (a, b), first in open_runs.items()]
        open_runs, previous_row = current, row
    out += [(first, a, previous_row, b) for (a, b), first in open_runs.items()]
    rect = np.array(out, dtype=np.float64).reshape(-1, 4)
    first, c0, last, c1 = rect.T
    return np.column_stack(
        (
            c0 * cell_size,
            (height - last - 1) * cell_size,
            c1 * cell_size,
            (height - first) * cell_size,
        )
    )
