"""`Crowd`: people as arrays (positions, velocities, radii, free walking speeds, each one's
route as waypoints), moved a step at a time by the collision-free speed model
(`fleetsim.people.model`).

Free walking speeds are drawn, when not given, from the normal distribution Weidmann (1993)
measured for walkers in the plane: mean 1.34 m/s, standard deviation 0.26 m/s, here cut to
0.6-2.0 m/s. A person's body is a disc of radius 0.2 m by default (about 0.4 m across the
shoulders, the width RiMEA assumes). A person who reaches the last waypoint of its route is
done (`done` lists them; `remove` takes them off the floor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.people.grid import expand
from fleetsim.people.model import Obstacles, SpeedModel, StepResult, step_people
from fleetsim.people.walls import Walls

FREE_SPEED_MEAN = 1.34  # m/s, Weidmann (1993)
FREE_SPEED_SD = 0.26
FREE_SPEED_RANGE = (0.6, 2.0)
RADIUS_M = 0.2


def free_speeds(count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` free walking speeds, m/s (Weidmann's distribution, cut to a sane range)."""
    return np.clip(rng.normal(FREE_SPEED_MEAN, FREE_SPEED_SD, count), *FREE_SPEED_RANGE)


class Crowd:
    """People on one floor: `add` them with routes, `step` them; arrays are the truth (`x`,
    `v`, `radius`, `v0`, `ids`). `walls` are what they may not cross. `compiled`: which step
    (`step_people`'s argument: by default the compiled one whenever Numba is there)."""

    def __init__(
        self,
        model: SpeedModel | None = None,
        walls: Walls | None = None,
        seed: int = 0,
        compiled: bool | None = None,
    ) -> None:
        self.model, self.walls, self.compiled = model or SpeedModel(), walls, compiled
        self.rng = np.random.default_rng(seed)
        self.x = np.empty((0, 2))
        self.v = np.empty((0, 2))
        self.radius = np.empty(0)
        self.v0 = np.empty(0)
        self.ids = np.empty(0, dtype=np.int64)
        self.leg = np.empty(0, dtype=np.int64)  # each person's next waypoint, a row of `points`
        self.target = np.empty((0, 2))  # each one's waypoint now (its last when done)
        self.offset = np.empty((0, 2))  # where each one's floor sits in the crowd's plane
        self.first = np.empty(0, dtype=np.int64)  # each person's first waypoint's row
        self.last = np.empty(0, dtype=np.int64)  # each person's final waypoint's row
        self._points = np.empty((0, 2))  # every route's waypoints, then room for more
        self._used = 0  # (the rows of `_points` in use: `points`)
        self.done = np.empty(0, dtype=np.int64)  # ids that reached their route's end last step
        self._next_id = 0

    def __len__(self) -> int:
        return len(self.x)

    @property
    def points(self) -> np.ndarray:
        """Every route's waypoints, one route after another (rows `first` to `last` are a
        person's)."""
        return self._points[: self._used]

    def _append(self, legs: list[np.ndarray]) -> np.ndarray:
        """Routes `legs` added after the others (room made by doubling); their first rows."""
        sizes = np.array([len(leg) for leg in legs], dtype=np.int64)
        need = self._used + int(sizes.sum())
        if need > len(self._points):
            grown = np.empty((max(need, 2 * len(self._points), 64), 2))
            grown[: self._used] = self._points[: self._used]
            self._points = grown
        start = self._used + np.cumsum(sizes) - sizes
        if legs:
            self._points[self._used : need] = np.concatenate(legs)
        self._used = need
        return start

    def _compact(self) -> None:
        """The routes of people gone, and routes replaced, let go once they are most of it."""
        count = self.last - self.first + 1
        if self._used <= 2 * int(count.sum()) + 1024:
            return
        _, at = expand(self.first, count)
        start = np.cumsum(count) - count
        self._points, self._used = self.points[at], len(at)
        self.leg = self.leg - self.first + start
        self.last = self.last - self.first + start
        self.first = start

    def add(
        self,
        positions: np.ndarray,
        routes: Sequence[np.ndarray],
        speeds: np.ndarray | None = None,
        radius: float | np.ndarray = RADIUS_M,
        offset: np.ndarray | None = None,
    ) -> np.ndarray:
        """People at `positions` (k, 2), each walking its route (waypoints (w, 2), w >= 1);
        speeds drawn from Weidmann's distribution when not given. Returns their ids.
        `offset` (2,) or (k, 2): where their floor sits in the crowd's plane, for a crowd on
        several floors side by side (people, walls and robots of one floor are given with
        its offset in `walls` and `step`'s robots, so floors never meet); default none."""
        pos = _xy(positions, "positions")
        k = len(pos)
        if len(routes) != k:
            raise ConfigError(f"Crowd.add: {k} people need {k} routes, got {len(routes)}")
        legs = [_xy(r, "each route") for r in routes]
        if any(len(r) == 0 for r in legs) or not all(np.isfinite(r).all() for r in legs):
            raise ConfigError("Crowd.add: each route needs one or more finite waypoints (x, y)")
        v0 = free_speeds(k, self.rng) if speeds is None else np.asarray(speeds, float)
        try:
            r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (k,))
            shift = np.zeros(2) if offset is None else np.asarray(offset, dtype=np.float64)
            shifts = np.broadcast_to(shift, (k, 2))
        except ValueError:
            raise ConfigError(f"Crowd.add: radius is one number or {k}, offset (2,) or "
                              f"({k}, 2)") from None  # fmt: skip
        if v0.shape != (k,) or (v0 <= 0).any() or (r <= 0).any() or not np.isfinite(pos).all():
            raise ConfigError("Crowd.add: positions finite, speeds and radii > 0, one each")
        start = self._append(legs)
        ids = np.arange(self._next_id, self._next_id + k)
        self._next_id += k
        self.x = np.concatenate((self.x, pos))
        self.v = np.concatenate((self.v, np.zeros((k, 2))))
        self.radius = np.concatenate((self.radius, r))
        self.v0 = np.concatenate((self.v0, v0))
        self.ids = np.concatenate((self.ids, ids))
        self.leg = np.concatenate((self.leg, start))
        self.target = np.concatenate((self.target, self.points[start]))
        self.offset = np.concatenate((self.offset, shifts))
        self.first = np.concatenate((self.first, start))
        self.last = np.concatenate((self.last, start + [len(x) - 1 for x in legs]))
        return ids

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The rows of people `ids` (each must be on the floor)."""
        ids = np.asarray(ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, ids)  # (ids stay in the order they were added)
        if (rows >= len(self.ids)).any() or (
            self.ids[np.minimum(rows, len(self) - 1)] != ids
        ).any():
            raise ConfigError(
                f"Crowd: no person with id {sorted(set(ids.tolist()) - set(self.ids.tolist()))}"
            )
        return rows

    def reroute(self, ids: np.ndarray, routes: Sequence[np.ndarray]) -> None:
        """Give people `ids` new routes (waypoints (w, 2) each, w >= 1), walked from where
        they stand."""
        rows = self.rows(ids)
        legs = [np.asarray(r, dtype=np.float64).reshape(-1, 2) for r in routes]
        if len(legs) != len(rows) or any(not len(r) or not np.isfinite(r).all() for r in legs):
            raise ConfigError("Crowd.reroute: one route of finite waypoints (x, y) each")
        start = self._append(legs)
        self.first[rows] = self.leg[rows] = start
        self.last[rows] = start + np.array([len(x) - 1 for x in legs])
        self.target[rows] = self.points[start]
        self._compact()

    def remove(self, ids: np.ndarray) -> None:
        """Take people off the floor by id."""
        keep = ~np.isin(self.ids, ids)
        for name in ("x", "v", "radius", "v0", "ids", "leg", "first", "last", "target",
                     "offset"):  # fmt: skip
            setattr(self, name, getattr(self, name)[keep])
        self._compact()  # (the routes of those gone: out, once they are most of it)

    def step(self, dt: float, robots: Obstacles | None = None) -> StepResult:
        """Move everyone one step of `dt` s; `done` then lists who reached its route's end
        (it stands there until removed). A waypoint is passed once the next one is in the
        open; a person whom a wall cuts off from its waypoint (pushed round a corner by the
        crowd) walks back to the one before."""
        walking = self.leg <= self.last
        if self.walls is not None and len(self):
            leg = np.minimum(self.leg, self.last)
            # (only the slow are checked: who is cut off slides along a wall or stands)
            slow = np.einsum("ij,ij->i", self.v, self.v) < 0.25 * self.v0 * self.v0
            lost = walking & (leg > self.first) & slow
            if lost.any():
                off = self.offset[lost]
                lost[lost] = self.walls.blocked(self.x[lost] + off, self.target[lost] + off)
                self.leg[lost] -= 1
                self.target[lost] = self.points[self.leg[lost]]
        shifted = bool(self.offset.any()) if len(self) else False
        x, target = (self.x + self.offset, self.target + self.offset) if shifted else \
            (self.x, self.target)  # fmt: skip
        result = step_people(x, self.radius, np.where(walking, self.v0, 0.0), target,
                             dt, self.model, self.walls, robots, self.compiled)  # fmt: skip
        if shifted:
            result.positions = result.positions - self.offset
        self.x, self.v = result.positions, result.velocities
        final = self.leg == self.last
        near = np.where(final, self.model.arrive, self.model.via)
        reached = (result.remaining <= near) & walking
        if self.walls is not None and (reached & ~final).any():
            on = reached & ~final  # (on to the next only when it is in the open)
            off = self.offset[on]
            on[on] = ~self.walls.blocked(self.x[on] + off, self.points[self.leg[on] + 1] + off)
            reached = np.where(final, reached, on)
        finished = reached & final
        self.done = self.ids[finished]
        self.leg[reached] += 1
        on = reached & ~final
        self.target[on] = self.points[self.leg[on]]
        return result


def _xy(points: Any, what: str) -> np.ndarray:
    """`points` as (n, 2) floats (one point (2,) as (1, 2)); a clear error for another shape."""
    xy = np.asarray(points, dtype=np.float64)
    if xy.shape == (2,):
        return xy[None]
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ConfigError(f"Crowd.add: {what} must be (x, y) points, shape (n, 2), got {xy.shape}")
    return xy
