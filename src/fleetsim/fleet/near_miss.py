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
from typing import Any

import numpy as np

from fleetsim.collision import broadphase
from fleetsim.collision.broadphase import candidate_pairs, overlapping, small_scene_pairs
from fleetsim.collision.static_index import StaticIndex
from fleetsim.site.site import Obstacles


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

    def check(self, time: float, xy: np.ndarray) -> None:
        """Note the near misses of robots at `xy` (N, 2) at `time`: an episode starts when a
        pair first comes within the gap and keeps the smallest gap (and its place) until the
        pair parts."""
        i, j = close_pairs(xy, 2 * self.radius + self.gap)
        gaps = np.hypot(*(xy[i] - xy[j]).T) - 2 * self.radius
        seen = self._note(time, "robot-robot", i, j, gaps, (xy[i] + xy[j]) / 2)
        if self._boxes is not None:
            i, k, dist = self._boxes.near(xy, self.radius + self.gap)
            seen |= self._note(time, "robot-structure", i, k, dist - self.radius, xy[i])
        for key in self._open.keys() - seen:
            del self._open[key]

    def _note(
        self, time: float, kind: str, a: np.ndarray, b: np.ndarray, gaps: np.ndarray,
        places: np.ndarray,
    ) -> set[tuple[str, int, int]]:  # fmt: skip
        seen = set()
        for i, j, gap, (x, y) in zip(a.tolist(), b.tolist(), gaps.tolist(), places.tolist(),
                                     strict=True):  # fmt: skip
            key = (kind, i, j)
            seen.add(key)
            record = self._open.get(key)
            if record is None:
                other = self.names[j] if kind == "robot-robot" else f"obstacle {j}"
                record = {"time": time, "kind": kind, "a": self.names[i], "b": other,
                          "gap_m": math.inf}  # fmt: skip
                self.records.append(record)
                self._open[key] = record
            if gap < record["gap_m"]:
                record.update(gap_m=max(gap, 0.0), closest_time=time, x=x, y=y)
        return seen


def close_pairs(xy: np.ndarray, distance: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of points (N, 2) closer than `distance`, sorted: candidates are the
    pairs whose squares of side `distance` overlap (all pairs at once for a small fleet, else
    through the collision broadphase), then exact distances."""
    if len(xy) < 2 or not distance > 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    lo = np.zeros((len(xy), 3))
    lo[:, :2] = xy - distance / 2
    hi = lo.copy()
    hi[:, :2] += distance
    if len(xy) ** 2 <= broadphase.SMALL_SCENE_PAIRS:
        every = np.arange(len(xy))
        i, j = small_scene_pairs(lo, hi, every, every[:0])
    else:
        i, j = candidate_pairs(lo, hi, 2 * distance)
    near = np.hypot(*(xy[i] - xy[j]).T) < distance
    return i[near], j[near]


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

    def near(self, xy: np.ndarray, distance: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(robot, box, distance) of the points within `distance` of a box's footprint."""
        robot, box = self._candidates(xy)
        d = xy[robot] - self.centre[box]
        local = np.stack(
            (self.cos[box] * d[:, 0] + self.sin[box] * d[:, 1],
             -self.sin[box] * d[:, 0] + self.cos[box] * d[:, 1]), axis=1
        )  # fmt: skip
        outside = np.maximum(np.abs(local) - self.half[box], 0.0)
        dist = np.hypot(outside[:, 0], outside[:, 1])
        keep = dist < distance
        return robot[keep], box[keep], dist[keep]

    def _candidates(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(robot, box) pairs whose square of half-side `reach` overlaps the box's AABB,
        sorted: all at once for a small scene, else through the static index."""
        n = len(xy)
        robots = np.zeros((n, 3))
        robots[:, :2] = xy - self.reach
        lo = np.concatenate((robots, self.lo))
        robots[:, :2] += 2 * self.reach
        hi = np.concatenate((robots, self.hi))
        moving, fixed = np.arange(n), np.arange(n, n + len(self.lo))
        if n * (n + len(self.lo)) <= broadphase.SMALL_SCENE_PAIRS:
            robot, box = small_scene_pairs(lo, hi, moving, fixed)
            structure = box >= n  # (robot-robot pairs are not asked for here)
            robot, box = robot[structure], box[structure]
        else:  # cells a little wider than the squares: round-off must not make them "wide"
            robot, box = self.index.pairs(lo, hi, moving, fixed, 2.5 * self.reach)
            robot, box = overlapping(lo, hi, robot, box)
        order = np.lexsort((box, robot))
        return robot[order], box[order] - n
