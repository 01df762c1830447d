"""Where people appearing at a node stand: the points of a lattice round it, nearest first,
clear of walls and in sight of the node (`lattice`), each taken by the first person it is free
for (`Placing`), and how many a group's nodes hold at once (`room`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

LATTICE_REACH_M = 8.0  # people who appear at a node stand within this of it, nearest first
MARGIN_M = 0.02  # between two people placed side by side, and between a person and a wall


def lattice(centre: np.ndarray, radius: float, walls: Any, offset: np.ndarray) -> np.ndarray:
    """The points round `centre` where a person of `radius` may appear, nearest first: a
    triangular lattice a person's width and 5 cm apart, within `LATTICE_REACH_M`, clear of
    `walls` (the crowd's, or None) and in sight of the node, not behind a rack (`offset`: the
    floor's, in the crowd's plane)."""
    step = 2 * radius + 0.05
    k = np.arange(-int(LATTICE_REACH_M / step), int(LATTICE_REACH_M / step) + 1)
    gx, gy = np.meshgrid(k * step, k * step * np.sqrt(3) / 2)
    gx = gx + (np.arange(len(k))[:, None] % 2) * step / 2
    points = centre + np.column_stack((gx.ravel(), gy.ravel()))
    points = points[np.argsort(np.hypot(*(points - centre).T), kind="stable")]
    if walls is not None:
        who, _, _, dist = walls.near(points + offset)
        blocked = np.zeros(len(points), dtype=bool)
        blocked[who[dist < radius + MARGIN_M]] = True
        blocked |= walls.cut_off(centre + offset, points + offset)
        points = points[~blocked]
    placed: np.ndarray = points
    return placed


class Placing:
    """Where the people appearing at once stand, one after another: each at the first point of
    its node's lattice (`spots(centre)`) at least a gap (their width and `MARGIN_M`) from
    everyone on their floor within reach (`floor`: positions) and from those placed before
    them (the farthest point, crowded, when none is: `crowded` counts them). A point found
    taken stays taken while they appear (people are only added), so each lattice is walked
    once, and those placed are looked up by cell rather than measured one by one."""

    def __init__(
        self, radius: float, floor: np.ndarray, spots: Callable[[np.ndarray], np.ndarray]
    ) -> None:
        self.gap, self.floor, self.spots = 2 * radius + MARGIN_M, floor, spots
        self.walks: dict[tuple[float, float], list[Any]] = {}
        self.placed: dict[tuple[int, int], list[tuple[float, float]]] = {}  # by cell
        self.crowded = 0

    def place(self, centre: np.ndarray) -> np.ndarray:
        """The place of the next person to appear at `centre` (a node)."""
        free = self.free_point(centre)
        if free is not None:
            return self._take(free)
        self.crowded += 1
        return self._take(self.walks[(float(centre[0]), float(centre[1]))][0][-1])

    def free_point(self, centre: np.ndarray) -> np.ndarray | None:
        """The first point of `centre`'s lattice still free (None: every one is taken, or
        there is none), marked tried: `place` takes it."""
        key = (float(centre[0]), float(centre[1]))
        walk = self.walks.get(key)
        if walk is None:  # [the lattice, its points clear of the floor's people, next to try]
            spots = self.spots(centre)
            walk = self.walks[key] = [spots, self._clear_of_floor(spots, centre), 0]
        spots, clear = walk[0], walk[1]
        for i in range(walk[2], len(spots)):
            if clear[i] and self._clear_of_placed(float(spots[i, 0]), float(spots[i, 1])):
                walk[2] = i + 1
                return np.asarray(spots[i])
        walk[2] = len(spots)
        return None

    def _clear_of_floor(self, spots: np.ndarray, centre: np.ndarray) -> np.ndarray:
        floor = self.floor
        near = floor[np.abs(floor - centre).max(axis=1) <= LATTICE_REACH_M + 1.0]
        clear = np.ones(len(spots), dtype=bool)
        for start in range(0, len(spots) if len(near) else 0, 128):  # (a block at a time)
            d = spots[start : start + 128, None, :] - near[None, :, :]
            squared = d[..., 0] ** 2 + d[..., 1] ** 2
            clear[start : start + 128] = (squared >= self.gap * self.gap).all(axis=1)
        return clear

    def _clear_of_placed(self, x: float, y: float) -> bool:
        gap = self.gap
        cx, cy = math.floor(x / gap), math.floor(y / gap)
        for i in (cx - 1, cx, cx + 1):
            for j in (cy - 1, cy, cy + 1):
                for px, py in self.placed.get((i, j), ()):
                    if (x - px) * (x - px) + (y - py) * (y - py) < gap * gap:
                        return False
        return True

    def _take(self, spot: np.ndarray) -> np.ndarray:
        x, y = float(spot[0]), float(spot[1])
        self.placed.setdefault((math.floor(x / self.gap), math.floor(y / self.gap)), []).append(
            (x, y)
        )
        return np.asarray(spot)


def room(radius: float, centres: Iterable[np.ndarray], spots: Callable[[np.ndarray], Any]) -> int:
    """How many people of `radius` the nodes at `centres` hold at once on an empty floor, each
    at a point of its node's lattice (`spots`) clear of the others."""
    placing = Placing(radius, np.empty((0, 2)), spots)
    held = 0
    for centre in centres:
        while (free := placing.free_point(centre)) is not None:
            placing._take(free)
            held += 1
    return held
