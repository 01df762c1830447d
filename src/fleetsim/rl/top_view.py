"""`TopView`: one floor of a site from above as an RGB array, drawn with NumPy alone (no
window, no plotting library): obstacles dark, lanes light blue, robots as discs (blue; red
while a fault holds them) with a line ahead, their goals green. The floor's picture is made
once; a frame adds the robots and goals to a copy of it.
"""

from __future__ import annotations

import math

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry.vectors import ramp

Colour = tuple[int, int, int]
BACKGROUND = (240, 240, 240)
OBSTACLE = (70, 70, 70)
LANE = (190, 210, 235)
ROBOT = (40, 90, 220)
HELD = (220, 50, 40)
GOAL = (40, 170, 60)
AHEAD = (250, 250, 250)


class TopView:
    """Floor `level` of `site` drawn `width` pixels wide (the height follows the floor's
    shape), `margin` metres around its nodes and obstacles."""

    def __init__(self, site: object, level: str, width: int = 640, margin: float = 1.0) -> None:
        if not (isinstance(width, int) and 16 <= width <= 8192):
            raise ConfigError(f"TopView: width is 16 to 8192 pixels, got {width!r}")
        graph = site.graph  # type: ignore[attr-defined]
        on = np.flatnonzero(graph.level == graph.level_names.index(level))
        obstacles = site.obstacles  # type: ignore[attr-defined]
        elevation = site.elevation(level)  # type: ignore[attr-defined]
        floor_of = obstacles.centres[:, 2] - obstacles.half_extents[:, 2]
        here = np.flatnonzero(np.abs(floor_of - elevation) < 1.0)
        corners = [graph.xy[on]]
        if len(here):
            reach = np.linalg.norm(obstacles.half_extents[here, :2], axis=1)[:, None]
            corners += [obstacles.centres[here, :2] - reach, obstacles.centres[here, :2] + reach]
        points = np.concatenate(corners)
        self.low = points.min(axis=0) - margin
        span = np.maximum(points.max(axis=0) + margin - self.low, 1e-6)
        self.scale = width / float(span[0])  # pixels a metre
        self.shape = (max(8, math.ceil(span[1] * self.scale)), width)
        image = np.empty((*self.shape, 3), dtype=np.uint8)
        image[:] = BACKGROUND
        lanes = np.flatnonzero(np.isin(graph.lane_from, on) & np.isin(graph.lane_to, on))
        self._segments(image, graph.xy[graph.lane_from[lanes]], graph.xy[graph.lane_to[lanes]])
        for k in here.tolist():
            self._box(image, obstacles.centres[k, :2], obstacles.half_extents[k, :2],
                      float(obstacles.yaws[k]))  # fmt: skip
        self.floor: np.ndarray = image

    def pixels(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns of points (n, 2) in metres (y up on the picture)."""
        p = (np.asarray(xy, dtype=np.float64) - self.low) * self.scale
        return (self.shape[0] - 1 - np.floor(p[:, 1])).astype(np.int64), np.floor(p[:, 0]).astype(
            np.int64
        )

    def _put(self, image: np.ndarray, rows: np.ndarray, cols: np.ndarray, colour: Colour) -> None:
        inside = (rows >= 0) & (rows < self.shape[0]) & (cols >= 0) & (cols < self.shape[1])
        image[rows[inside], cols[inside]] = colour

    def _segments(
        self, image: np.ndarray, a: np.ndarray, b: np.ndarray, colour: Colour = LANE
    ) -> None:
        if not len(a):
            return
        count = np.maximum(2, np.ceil(np.linalg.norm(b - a, axis=1) * self.scale * 1.5)).astype(int)
        which = np.repeat(np.arange(len(a)), count)
        t = ramp(count) / np.repeat(count - 1, count)
        self._put(image, *self.pixels(a[which] + (b - a)[which] * t[:, None]), colour)

    def _box(self, image: np.ndarray, centre: np.ndarray, half: np.ndarray, yaw: float) -> None:
        reach = float(np.hypot(*half))
        r0, c0 = self.pixels((centre - reach)[None])
        r1, c1 = self.pixels((centre + reach)[None])
        rows, cols = np.mgrid[max(r1[0], 0) : min(r0[0], self.shape[0] - 1) + 1,
                              max(c0[0], 0) : min(c1[0], self.shape[1] - 1) + 1]  # fmt: skip
        x = self.low[0] + (cols + 0.5) / self.scale - centre[0]
        y = self.low[1] + (self.shape[0] - rows - 0.5) / self.scale - centre[1]
        c, s = math.cos(yaw), math.sin(yaw)
        inside = (np.abs(c * x + s * y) <= half[0]) & (np.abs(-s * x + c * y) <= half[1])
        image[rows[inside], cols[inside]] = OBSTACLE

    def draw(
        self,
        positions: np.ndarray,
        yaws: np.ndarray,
        radii: np.ndarray,
        goals: np.ndarray | None = None,
        held: np.ndarray | None = None,
    ) -> np.ndarray:
        """The floor with robots at `positions` (n, 2) facing `yaws`, discs of `radii` (m),
        red where `held`, and `goals` (n, 2): (height, width, 3) uint8."""
        image: np.ndarray = self.floor.copy()
        n = len(positions)
        if goals is not None and len(goals):
            mark = max(2, int(0.15 * self.scale))
            dr, dc = np.mgrid[-mark : mark + 1, -mark : mark + 1]
            rows, cols = self.pixels(goals)
            self._put(image, (rows[:, None] + dr.ravel()).ravel(),
                      (cols[:, None] + dc.ravel()).ravel(), GOAL)  # fmt: skip
        if not n:
            return image
        px = np.maximum(1, np.round(np.asarray(radii) * self.scale)).astype(np.int64)
        reach = int(px.max())
        dr, dc = np.mgrid[-reach : reach + 1, -reach : reach + 1]
        dr, dc = dr.ravel(), dc.ravel()
        inside = dr[None] ** 2 + dc[None] ** 2 <= px[:, None] ** 2  # (n, stencil)
        rows, cols = self.pixels(positions)
        colour = np.tile(np.array(ROBOT, dtype=np.uint8), (n, 1))
        if held is not None:
            colour[np.asarray(held, dtype=bool)] = HELD
        r, c = rows[:, None] + dr[None], cols[:, None] + dc[None]
        keep = inside & (r >= 0) & (r < self.shape[0]) & (c >= 0) & (c < self.shape[1])
        who = np.broadcast_to(np.arange(n)[:, None], keep.shape)[keep]
        image[r[keep], c[keep]] = colour[who]
        tip = np.asarray(positions) + 0.8 * np.asarray(radii)[:, None] * np.column_stack(
            (np.cos(yaws), np.sin(yaws))
        )
        self._segments(image, np.asarray(positions, dtype=np.float64), tip, AHEAD)
        return image
