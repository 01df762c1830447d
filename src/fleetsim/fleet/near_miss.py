"""Near misses: robots that came within a small gap of each other or of the site's structure
without touching it, each episode recorded once, when it starts, with time, kind and place.

A robot is a disc of its footprint radius (the circle round its footprint box). Robot-robot:
two discs closer than `gap`; robot-structure: a disc closer than `gap` to one of the site's
obstacle boxes. Pairs come from the collision broadphase for robots and from the collision
system's static index for the obstacles (built once), so a check is a few array operations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from fleetsim.collision import broadphase
from fleetsim.collision.broadphase import (
    candidate_pairs,
    candidate_pairs_of,
    partial_pays,
    small_scene_pairs,
)
from fleetsim.collision.pairs import pairs_of_unchanged
from fleetsim.collision.static_index import StaticIndex
from fleetsim.geometry.vectors import any_set
from fleetsim.site.site import Obstacles

_INCREMENTAL = broadphase.SMALL_SCENE_PAIRS  # up to N^2 of this, test only robots that moved
EVERY_S = 0.25  # `every`: a check at most this often (simulated seconds)
_NO_NEAR: tuple[np.ndarray, ...] = (np.empty(0, dtype=np.int64),) * 2 + (np.empty(0),)


class _Seen(NamedTuple):
    """What `NearMisses.close` saw: robot positions, close robot pairs, robots near boxes."""

    xy: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray]
    near: tuple[np.ndarray, ...]


class NearMisses:
    """Watch robot positions for near misses; `records` lists them as dicts."""

    def __init__(
        self, names: Sequence[str], radius: float, gap: float, obstacles: Obstacles | None = None
    ) -> None:
        self.names = list(names)
        self.radius = float(radius)
        self.gap = float(gap)
        self.records: list[dict[str, Any]] = []
        self._open: dict[tuple[str, int, int], dict[str, Any]] = {}  # episodes going on
        self._boxes = _Structure(obstacles, self.radius + self.gap) if obstacles else None
        self._last: _Seen | None = None  # what the last `close` saw
        self._next = 0.0  # when `every` checks next

    def every(self, time: float, xy: np.ndarray) -> None:
        """`check` when `EVERY_S` has passed since the last one `every` made."""
        if time >= self._next:
            self._next = time + EVERY_S
            self.check(time, xy)

    def kpis(self) -> dict[str, Any]:
        """Episodes by kind so far, and the gap that makes one."""
        counts = {"robot-robot": 0, "robot-structure": 0}
        for r in self.records:
            counts[r["kind"]] = counts.get(r["kind"], 0) + 1
        return {"near_misses": counts, "near_miss_gap_m": self.gap}

    def check(self, time: float, xy: np.ndarray) -> None:
        """Note the near misses of robots at `xy` (N, 2) at `time`: an episode starts when a
        pair first comes within the gap and keeps the smallest gap (and its place) until the
        pair parts."""
        (i, j, gaps), (r, k, dist) = self.close(xy)
        seen = self._note(time, "robot-robot", i, j, gaps, (xy[i] + xy[j]) / 2)
        if self._boxes is not None:
            seen |= self._note(time, "robot-structure", r, k, dist - self.radius, xy[r])
        for key in self._open.keys() - seen:
            del self._open[key]

    def close(self, xy: np.ndarray) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """((i, j, gap), (robot, box, distance)) now, each sorted: robot pairs within the gap
        (i < j, gap between their discs) and robots within the gap of an obstacle box (distance
        from the centre to the box). Robots that did not move since the last call keep what
        they had (the structure does not move): only the others are tested again."""
        xy = np.asarray(xy, dtype=np.float64)
        last = self._last
        moved = None
        if last is not None and last.xy.shape == xy.shape:
            moved = (xy != last.xy).any(axis=1)  # (NaN counts as moved)
        reach = 2 * self.radius + self.gap
        if last is not None and moved is not None and not any_set(moved):
            (i, j), near = last.pairs, last.near
        else:
            found = self._fresh(xy, moved, reach) if moved is not None else None
            if found is None:  # the first call, or many moved in a large fleet: every robot
                i, j = close_pairs(xy, reach)
                near = _NO_NEAR
                if self._boxes is not None:
                    near = self._boxes.near(xy, self.radius + self.gap)
            else:
                assert last is not None and moved is not None
                fresh, by_boxes = found
                i, j = _merge(*pairs_of_unchanged(*last.pairs, moved), *fresh, len(xy))
                near = _NO_NEAR if by_boxes is None else _kept_near(last.near, moved, by_boxes)
        d = xy[i] - xy[j]
        gaps = np.hypot(d[:, 0], d[:, 1]) - 2 * self.radius
        self._last = _Seen(xy.copy(), (i, j), near)
        return (i, j, gaps), near

    def _fresh(
        self, xy: np.ndarray, moved: np.ndarray, reach: float
    ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, ...] | None] | None:
        """For the robots that `moved`: their close robot pairs (i < j, sorted) and, with
        structure, their (robot, box, distance) near it (sorted), or None in a large fleet
        where more than `broadphase.PARTIAL_SHARE` of them moved (or without the compiled
        grid): every robot is tested then. A small fleet tests them from one matrix; a large
        one through the compiled grid, where only the robots that moved look round their
        cells."""
        n = len(xy)
        if n * n <= _INCREMENTAL:
            if self._boxes is None:
                return close_pairs_of(xy, reach, moved), None
            return self._fresh_small(xy, moved)
        if not partial_pays(int(np.count_nonzero(moved)), n):
            return None  # (before the squares and masks)
        lo, hi = _squares(xy, reach / 2)
        every, flat = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
        found = candidate_pairs_of(lo, hi, 2 * reach, every, moved, flat)
        if found is None:
            return None
        pairs = _closer_sorted(xy, *found, reach)
        if self._boxes is None:
            return pairs, None
        return pairs, self._boxes.near(xy, self.radius + self.gap, moved.nonzero()[0])

    def _fresh_small(
        self, xy: np.ndarray, moved: np.ndarray
    ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """`_fresh` of a small fleet with structure, from one matrix: robot squares as wide
        as the structure's reach hold every robot pair within reach too (then exact tests)."""
        assert self._boxes is not None
        boxes, n = self._boxes, len(xy)
        lo, hi = boxes.squares(xy)
        others = np.concatenate(((~moved).nonzero()[0], np.arange(n, len(lo))))
        a, b = small_scene_pairs(lo, hi, moved.nonzero()[0], others)
        robot = b < n
        pairs = _closer_sorted(xy, a[robot], b[robot], 2 * self.radius + self.gap)
        # (robot, box) come sorted: moved rows ascending, then columns ascending
        found = boxes.distances(xy, a[~robot], b[~robot] - n, self.radius + self.gap)
        return pairs, found

    def _note(
        self,
        time: float,
        kind: str,
        a: np.ndarray,
        b: np.ndarray,
        gaps: np.ndarray,
        places: np.ndarray,
    ) -> set[tuple[str, int, int]]:
        seen = set()
        for i, j, gap, (x, y) in zip(
            a.tolist(), b.tolist(), gaps.tolist(), places.tolist(), strict=True
        ):
            key = (kind, i, j)
            seen.add(key)
            record = self._open.get(key)
            if record is None:
                other = self.names[j] if kind == "robot-robot" else f"obstacle {j}"
                record = {
                    "time": time,
                    "kind": kind,
                    "a": self.names[i],
                    "b": other,
                    "gap_m": math.inf,
                }
                self.records.append(record)
                self._open[key] = record
            if gap < record["gap_m"]:
                record.update(gap_m=max(gap, 0.0), closest_time=time, x=x, y=y)
        return seen


def _kept_near(
    last: tuple[np.ndarray, ...], moved: np.ndarray, fresh: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    """The (robot, box, distance) rows of the robots that did not move, from `last`, with the
    `fresh` rows of those that did, sorted by robot, then box."""
    kept = ~moved[last[0]]
    both = [np.concatenate((a[kept], b)) for a, b in zip(last, fresh, strict=True)]
    order = np.lexsort((both[1], both[0]))
    return both[0][order], both[1][order], both[2][order]


def close_pairs(xy: np.ndarray, distance: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of points (N, 2) closer than `distance`, sorted: candidates are the
    pairs whose squares of side `distance` overlap (all pairs at once for a small fleet, else
    through the collision broadphase), then exact distances."""
    if len(xy) < 2 or not distance > 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    lo, hi = _squares(xy, distance / 2)
    if len(xy) ** 2 <= broadphase.SMALL_SCENE_PAIRS:
        every = np.arange(len(xy))
        i, j = small_scene_pairs(lo, hi, every, every[:0])
    else:
        i, j = candidate_pairs(lo, hi, 2 * distance)
    d = xy[i] - xy[j]
    near = np.hypot(d[:, 0], d[:, 1]) < distance
    return i[near], j[near]


def close_pairs_of(
    xy: np.ndarray, distance: float, moved: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`close_pairs` restricted to the pairs with a `moved` (N,) bool point (i < j, sorted),
    for a small fleet: those rows against every point at once."""
    lo, hi = _squares(xy, distance / 2)
    a, b = small_scene_pairs(lo, hi, moved.nonzero()[0], (~moved).nonzero()[0])
    return _closer_sorted(xy, a, b, distance)


def _closer_sorted(
    xy: np.ndarray, a: np.ndarray, b: np.ndarray, distance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Of the candidate point pairs (a, b), those closer than `distance`, as (i < j) sorted."""
    i, j = np.minimum(a, b), np.maximum(a, b)
    d = xy[i] - xy[j]
    near = np.hypot(d[:, 0], d[:, 1]) < distance
    i, j = i[near], j[near]
    order = np.argsort(i * len(xy) + j)
    return i[order], j[order]


def _squares(xy: np.ndarray, half: float) -> tuple[np.ndarray, np.ndarray]:
    """Boxes (lo, hi), each (N, 3) with z = 0, of squares of half-side `half` round points."""
    lo = np.zeros((len(xy), 3))
    lo[:, :2] = xy - half
    hi = lo.copy()
    hi[:, :2] += 2 * half
    return lo, hi


def _merge(
    i1: np.ndarray, j1: np.ndarray, i2: np.ndarray, j2: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint sorted pair lists as one, sorted by (i, j)."""
    i, j = np.concatenate((i1, i2)), np.concatenate((j1, j2))
    order = np.argsort(i * n + j)
    return i[order], j[order]


class _Structure:
    """The site's obstacle boxes (yawed, 2-D footprints) for `near`: candidates come from the
    collision system's static index over their world AABBs, then exact distances."""

    def __init__(self, obstacles: Obstacles, reach: float) -> None:
        self.centre = np.asarray(obstacles.centres, dtype=np.float64)[:, :2]
        self.half = np.asarray(obstacles.half_extents, dtype=np.float64)[:, :2]
        yaw = np.asarray(obstacles.yaws, dtype=np.float64)
        self.cos, self.sin = np.cos(yaw), np.sin(yaw)
        ext = np.abs(self.cos)[:, None] * self.half + np.abs(self.sin)[:, None] * self.half[:, ::-1]
        self.lo = np.zeros((len(self.centre), 3))
        self.lo[:, :2] = self.centre - ext
        self.hi = self.lo.copy()
        self.hi[:, :2] = self.centre + ext
        self.reach = reach
        self.index = StaticIndex()

    def near(
        self, xy: np.ndarray, distance: float, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(robot, box, distance) of the points (those `rows` of them, when given) within
        `distance` of a box's footprint, sorted by robot, then box."""
        robot, box = self._candidates(xy, rows)
        return self.distances(xy, robot, box, distance)

    def distances(
        self, xy: np.ndarray, robot: np.ndarray, box: np.ndarray, distance: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The (robot, box, distance) candidate pairs whose point is within `distance` of the
        box's footprint."""
        d = xy[robot] - self.centre[box]
        cos, sin, half = self.cos[box], self.sin[box], self.half[box]
        along = np.maximum(np.abs(cos * d[:, 0] + sin * d[:, 1]) - half[:, 0], 0.0)
        across = np.maximum(np.abs(-sin * d[:, 0] + cos * d[:, 1]) - half[:, 1], 0.0)
        dist = np.hypot(along, across)  # from the footprint (0 inside)
        keep = dist < distance
        return robot[keep], box[keep], dist[keep]

    def squares(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (lo, hi): the robots' squares of half-side `reach`, then the obstacles'."""
        lo, hi = _squares(xy, self.reach)
        return np.concatenate((lo, self.lo)), np.concatenate((hi, self.hi))

    def _candidates(
        self, xy: np.ndarray, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(robot, box) pairs whose square of half-side `reach` overlaps the box's AABB (of
        the robots in `rows`, when given), sorted: all at once for a small scene, else through
        the static index."""
        n = len(xy)
        lo, hi = self.squares(xy)
        moving = np.arange(n) if rows is None else rows
        fixed = np.arange(n, n + len(self.lo))
        if n * (n + len(self.lo)) <= broadphase.SMALL_SCENE_PAIRS:
            robot, box = small_scene_pairs(lo, hi, moving, fixed)
            structure = box >= n  # (robot-robot pairs are not asked for here)
            robot, box = robot[structure], box[structure]
        else:  # cells a little wider than the squares: round-off must not make them "wide"
            robot, box = self.index.overlaps(lo, hi, moving, fixed, 2.5 * self.reach)
        order = np.lexsort((box, robot))
        return robot[order], box[order] - n
