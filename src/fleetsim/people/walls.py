"""`Walls`: what people may not walk through, as line segments in the plane, with a static cell
index that finds, for many points at once, the segments within a reach of each.

Segments come from boxes (a site's obstacles: each box its four sides), from end points (a
building's walls, a closed door) or both. Long segments are cut into pieces no longer than a
cell, each piece entered in every cell its box grown by the reach touches, so that a point
looks in its own cell only.
"""

from __future__ import annotations

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry.vectors import ramp
from fleetsim.people import kernel

MAX_TABLE = 20_000_000  # cells: beyond this the index searches instead of looking up


def box_sides(centres: np.ndarray, half_extents: np.ndarray, yaws: np.ndarray) -> np.ndarray:
    """The four sides (4K, 2, 2) of boxes in the plane: centres (K, 2+), half extents (K, 2+),
    yaws (K,)."""
    c = np.asarray(centres, dtype=np.float64)[:, :2]
    h = np.asarray(half_extents, dtype=np.float64)[:, :2]
    cos, sin = np.cos(yaws), np.sin(yaws)
    corners = []
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        x, y = sx * h[:, 0], sy * h[:, 1]
        corners.append(c + np.column_stack((cos * x - sin * y, sin * x + cos * y)))
    ring = np.stack(corners, axis=1)  # (K, 4, 2)
    return np.stack((ring, np.roll(ring, -1, axis=1)), axis=2).reshape(-1, 2, 2)


def closest_on_segments(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """For each row, the point of segment `segments[k]` (2, 2) nearest `points[k]` (2,)."""
    a, b = segments[:, 0], segments[:, 1]
    ab = b - a
    length2 = np.maximum((ab * ab).sum(axis=1), 1e-18)
    t = np.clip(((points - a) * ab).sum(axis=1) / length2, 0.0, 1.0)
    closest: np.ndarray = a + t[:, None] * ab
    return closest


class Walls:
    """Segments (K, 2, 2) indexed for queries within `reach` metres (cells of `cell` m)."""

    def __init__(self, segments: np.ndarray, reach: float = 1.2, cell: float = 1.0) -> None:
        seg = np.asarray(segments, dtype=np.float64).reshape(-1, 2, 2)
        if not np.isfinite(seg).all():
            raise ConfigError("Walls: segment end points must be finite numbers")
        if not (reach > 0 and cell > 0):
            raise ConfigError(f"Walls: reach and cell must be > 0, got {reach}, {cell}")
        self.reach, self.cell = float(reach), float(cell)
        self.segments = self._pieces(seg)
        self._index()

    @classmethod
    def from_boxes(
        cls, centres: np.ndarray, half_extents: np.ndarray, yaws: np.ndarray, reach: float = 1.2
    ) -> Walls:
        """The sides of boxes."""
        return cls(box_sides(centres, half_extents, yaws), reach)

    def with_segments(self, more: np.ndarray) -> Walls:
        """These walls and `more` segments (a closed door, say), indexed anew."""
        return Walls(np.concatenate((self.segments, np.asarray(more).reshape(-1, 2, 2))),
                     self.reach, self.cell)  # fmt: skip

    def _pieces(self, seg: np.ndarray) -> np.ndarray:
        length = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
        parts = np.maximum(1, np.ceil(length / self.cell)).astype(np.int64)
        owner = np.repeat(np.arange(len(seg)), parts)
        k = ramp(parts)
        t0, t1 = k / parts[owner], (k + 1) / parts[owner]
        a, d = seg[owner, 0], seg[owner, 1] - seg[owner, 0]
        pieces: np.ndarray = np.stack((a + t0[:, None] * d, a + t1[:, None] * d), axis=1)
        return pieces

    def _index(self) -> None:
        seg, c = self.segments, self.cell
        if not len(seg):
            self._keys = np.empty(0, dtype=np.int64)
            self._ids = np.empty(0, dtype=np.int64)
            return
        lo = np.floor((seg.min(axis=1) - self.reach) / c).astype(np.int64)
        hi = np.floor((seg.max(axis=1) + self.reach) / c).astype(np.int64)
        self._origin = lo.min(axis=0)
        self._width = int((hi - self._origin).max(axis=0)[0]) + 3
        nx, ny = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
        count = nx * ny
        ids = np.repeat(np.arange(len(seg)), count)
        k = ramp(count)
        cx = lo[ids, 0] + k % nx[ids]
        cy = lo[ids, 1] + k // nx[ids]
        keys = self._key(cx, cy)
        order = np.argsort(keys, kind="stable")
        self._keys, self._ids = keys[order], ids[order]
        self._height = int(hi[:, 1].max() - self._origin[1]) + 1
        cells = self._width * self._height
        self._first = (  # (each cell's first entry; None on a very large plan: a search)
            np.searchsorted(self._keys, np.arange(cells + 1)) if cells <= MAX_TABLE else None
        )

    def index_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The cell index as the compiled crowd step reads it: (cell, origin x, origin y,
        width, height, reach) as floats, the entries' segment ids, their cell keys (sorted)
        and each cell's first entry (empty on a plan too large for a table)."""
        shape = np.array([self.cell, *self._origin, self._width, self._height, self.reach],
                         dtype=np.float64)  # fmt: skip
        first = self._first if self._first is not None else np.empty(0, dtype=np.int64)
        return shape, self._ids, self._keys, first

    def _key(self, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        key: np.ndarray = (cy - self._origin[1]) * self._width + (cx - self._origin[0])
        return key

    def near(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every (point, segment) within `reach`: point rows (P,), segment rows (P,), the
        segment's nearest point (P, 2) and the distance (P,)."""
        pts = np.asarray(points, dtype=np.float64)
        empty = np.empty(0, dtype=np.int64)
        if not len(self.segments) or not len(pts):
            return empty, empty, np.empty((0, 2)), np.empty(0)
        cell = np.floor(pts / self.cell).astype(np.int64) - self._origin
        inside = (cell >= 0).all(axis=1) & (cell[:, 0] < self._width) & (cell[:, 1] < self._height)
        key = np.where(inside, cell[:, 1] * self._width + cell[:, 0], 0)
        if self._first is not None:
            start = self._first[key]
            count = np.where(inside, self._first[key + 1] - start, 0)
        else:
            start = np.searchsorted(self._keys, key, side="left")
            count = np.where(inside, np.searchsorted(self._keys, key, side="right") - start, 0)
        who = np.repeat(np.arange(len(pts)), count)
        k = ramp(count)
        seg = self._ids[start[who] + k]
        closest = closest_on_segments(pts[who], self.segments[seg])
        d = closest - pts[who]
        dist = np.hypot(d[:, 0], d[:, 1])
        keep = dist <= self.reach
        return who[keep], seg[keep], closest[keep], dist[keep]

    def crossed(
        self,
        start: np.ndarray,
        end: np.ndarray,
        pairs: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """(P,) bool: whether the straight move from `start` to `end` (P, 2) crosses a segment
        (for moves shorter than `reach`); `pairs`: `near(start)`'s rows and segments, when
        the caller has them."""
        who, seg = pairs if pairs is not None else self.near(start)[:2]
        if not len(who):
            return np.zeros(len(start), dtype=bool)
        p, r = start[who], end[who] - start[who]
        q, s = self.segments[seg, 0], self.segments[seg, 1] - self.segments[seg, 0]
        denom = r[:, 0] * s[:, 1] - r[:, 1] * s[:, 0]
        qp = q - p
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (qp[:, 0] * s[:, 1] - qp[:, 1] * s[:, 0]) / denom
            u = (qp[:, 0] * r[:, 1] - qp[:, 1] * r[:, 0]) / denom
        hit = (np.abs(denom) > 1e-15) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
        out = np.zeros(len(start), dtype=bool)
        out[who[hit]] = True
        return out

    def blocked(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """(P,) bool: whether a wall cuts the first `reach` metres of the straight line from
        each `start` toward its `end` (P, 2): the way there is not open."""
        if len(start) and len(self.segments):
            fast = kernel.blocked_arrays(np.ascontiguousarray(start, dtype=np.float64),
                                         np.ascontiguousarray(end, dtype=np.float64),
                                         self.segments, *self.index_arrays())  # fmt: skip
            if fast is not None:
                out: np.ndarray = fast
                return out
        d = end - start
        length = np.hypot(d[:, 0], d[:, 1])
        scale = np.minimum(1.0, self.reach / np.maximum(length, 1e-12))
        return self.crossed(start, start + d * scale[:, None])

    def cut_off(self, origin: np.ndarray, points: np.ndarray) -> np.ndarray:
        """(P,) bool: whether a wall stands between `origin` (2,) and each of `points` (P, 2)
        (every wall near the points' extent is tested: for one-off questions, not a step's)."""
        pts = np.asarray(points, dtype=np.float64)
        if not len(self.segments) or not len(pts):
            return np.zeros(len(pts), dtype=bool)
        lo = np.minimum(pts.min(axis=0), origin)
        hi = np.maximum(pts.max(axis=0), origin)
        seg = self.segments
        near = (seg.max(axis=1) >= lo).all(axis=1) & (seg.min(axis=1) <= hi).all(axis=1)
        q, s = seg[near, 0], seg[near, 1] - seg[near, 0]
        r = pts - origin  # (P, 2)
        denom = r[:, None, 0] * s[None, :, 1] - r[:, None, 1] * s[None, :, 0]
        qp = q[None, :, :] - origin
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (qp[..., 0] * s[None, :, 1] - qp[..., 1] * s[None, :, 0]) / denom
            u = (qp[..., 0] * r[:, None, 1] - qp[..., 1] * r[:, None, 0]) / denom
        hit = (np.abs(denom) > 1e-15) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
        cut: np.ndarray = hit.any(axis=1)
        return cut
