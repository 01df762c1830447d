"""The RiMEA guideline's tests that apply to a crowd on one floor (RiMEA e.V., "Guideline for
Microscopic Evacuation Analysis", version 4.1.1, 2022; the numbering has been the same since
version 2.2): each built and run here, returning what the test measures, so that the project's
tests run short versions and `benchmarks/people.py` the full ones.

- test 1, keeping the speed in a corridor: one person, 1.33 m/s, along a 2 m x 40 m corridor:
  the 40 m take 26 to 34 s;
- test 4, the fundamental diagram: people in a corridor at a set density (here periodic: who
  leaves at one end comes in at the other, and sees the people beyond the ends); the mean
  speed, to set beside Weidmann's curve (`weidmann_speed`);
- test 6, a corner: 20 people walk round a left corner of a 2 m corridor without passing
  through a wall;
- test 7, demographics: free walking speeds drawn as the population's (`free_speeds`);
- test 12, a bottleneck: a room emptied through a 1 m wide corridor: a jam before it, the flow
  through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fleetsim.people.crowd import Crowd, free_speeds
from fleetsim.people.model import SpeedModel, step_people
from fleetsim.people.walls import Walls

DT = 0.1


def weidmann_speed(density: np.ndarray | float) -> np.ndarray:
    """Weidmann's (1993) speed at a density (people a square metre): 1.34 (1 - exp(-1.913
    (1/density - 1/5.4))) m/s."""
    rho = np.asarray(density, dtype=np.float64)
    speed: np.ndarray = 1.34 * (1.0 - np.exp(-1.913 * (1.0 / rho - 1.0 / 5.4)))
    return speed


def scatter(count: int, low: tuple[float, float], high: tuple[float, float], gap: float,
            rng: np.random.Generator, wrap: float = 0.0) -> np.ndarray:  # fmt: skip
    """`count` points in the box low-high at least `gap` apart (distances along x wrapped at
    `wrap` when it is > 0), drawn at random; an error when they do not fit in 200 tries
    each."""
    points = np.empty((0, 2))
    tries = 0
    while len(points) < count:
        tries += 1
        if tries > 200 * count:
            raise ValueError(f"scatter: {count} points {gap} m apart do not fit")
        p = rng.uniform(low, high)
        d = np.abs(points - p)
        if wrap > 0:
            d[:, 0] = np.minimum(d[:, 0], wrap - d[:, 0])
        if not len(points) or (np.hypot(d[:, 0], d[:, 1]) >= gap).all():
            points = np.vstack((points, p))
    return points


def corridor_time(
    length: float = 40.0, speed: float = 1.33, model: SpeedModel | None = None
) -> float:
    """Test 1: seconds one person at `speed` takes along `length` m of a 2 m corridor."""
    walls = Walls(np.array([[[-1.0, 0.0], [length + 2, 0.0]], [[-1.0, 2.0], [length + 2, 2.0]]]))
    crowd = Crowd(model, walls)
    crowd.add(np.array([[0.0, 1.0]]), [np.array([[length + 1.5, 1.0]])], np.array([speed]))
    t = 0.0
    while crowd.x[0, 0] < length and t < 10 * length / speed:
        crowd.step(DT)
        t += DT
    x0, x1 = crowd.x[0, 0] - crowd.v[0, 0] * DT, crowd.x[0, 0]
    return float(t - DT * (x1 - length) / max(x1 - x0, 1e-12))  # (the crossing, between steps)


def lattice(count: int, length: float, width: float, rng: np.random.Generator) -> np.ndarray:
    """`count` points on a lattice filling a periodic corridor `length` x `width` (0.21 m
    from its walls), shifted a little at random, no two closer than 0.41 m."""
    inner = width - 0.42
    cols = max(1, int(length / 0.415))  # (rows as full as they go; shifted every other row)
    rows = math.ceil(count / cols)
    dx, dy = length / cols, inner / max(rows - 1, 1)
    if rows > 1 and math.hypot(dx / 2, dy) < 0.43:
        raise ValueError(f"lattice: {count} people do not fit in {length} m x {width} m")
    k = np.arange(count)
    x = np.column_stack(((k % cols + 0.5 * (k // cols % 2)) * dx, 0.21 + (k // cols) * dy))
    x += rng.uniform(-0.01, 0.01, x.shape)
    x[:, 0] %= length
    x[:, 1] = np.clip(x[:, 1], 0.21, width - 0.21)
    return x


@dataclass
class Diagram:
    """Test 4 at one density: the density asked and the mean speed measured (m/s), and the
    people's positions at the end."""

    density: float
    speed: float
    positions: np.ndarray


def fundamental_diagram(density: float, length: float = 30.0, width: float = 4.0,
                        seconds: float = 40.0, seed: int = 0,
                        model: SpeedModel | None = None) -> Diagram:  # fmt: skip
    """Test 4: people at `density` in a periodic corridor, walking east; their mean speed
    over the second half of `seconds`."""
    m = model or SpeedModel()
    rng = np.random.default_rng(seed)
    n = round(density * length * width)
    try:
        x = scatter(n, (0.0, 0.21), (length, width - 0.21), 0.41, rng, wrap=length)
    except ValueError:  # (too dense to scatter at random: a jittered lattice)
        x = lattice(n, length, width, rng)
    radius, v0 = np.full(n, 0.2), free_speeds(n, rng)
    walls = Walls(np.array([[[-5, 0.0], [length + 5, 0.0]], [[-5, width], [length + 5, width]]]))
    steps = round(seconds / DT)
    speeds = []
    for k in range(steps):
        lo, hi = x[:, 0] < m.reach, x[:, 0] > length - m.reach  # (the people beyond the ends)
        every = np.concatenate((x, x[lo] + [length, 0.0], x[hi] - [length, 0.0]))
        r = np.concatenate((radius, radius[lo], radius[hi]))
        free = np.concatenate((v0, v0[lo], v0[hi]))
        ahead = every + np.array([10.0 * length, 0.0])
        moved = step_people(every, r, free, ahead, DT, m, walls).positions[:n]
        if k >= steps // 2:
            speeds.append(float(np.mean(moved[:, 0] - x[:, 0])) / DT)
        x = moved
        x[:, 0] %= length
    return Diagram(density, float(np.mean(speeds)), x)


@dataclass
class Corner:
    """Test 6: seconds until everyone was round the corner (inf: not all were), the deepest
    any person ever reached into a wall (m, <= 0: none), and whether anyone left the
    corridor."""

    seconds: float
    deepest: float
    left_corridor: bool


def corner(people: int = 20, seed: int = 0, limit_s: float = 120.0) -> Corner:
    """Test 6: `people` in the first 6 m of a 2 m wide corridor 12 m long that turns left into
    another 12 m; each walks to its far end."""
    segments = np.array([[[0, 0], [12, 0]], [[12, 0], [12, 12]], [[0, 2], [10, 2]],
                         [[10, 2], [10, 12]], [[0, 0], [0, 2]]], dtype=float)  # fmt: skip
    walls = Walls(segments)
    crowd = Crowd(walls=walls, seed=seed)
    start = scatter(people, (0.25, 0.25), (5.75, 1.75), 0.42, crowd.rng)
    crowd.add(start, [np.array([[11.0, 1.0], [11.0, 12.5]])] * people)
    deepest, outside, t, out = -np.inf, False, 0.0, 0
    while out < people and t < limit_s:
        crowd.step(DT)
        t += DT
        who, _, _, dist = walls.near(crowd.x)
        if len(dist):
            deepest = max(deepest, float((crowd.radius[who] - dist).max()))
        x, y = crowd.x[:, 0], crowd.x[:, 1]
        inside = ((y >= 0) & (y <= 2) & (x >= 0) & (x <= 12)) | ((x >= 10) & (x <= 12) & (y >= 0))
        outside |= not inside.all()
        out += len(crowd.done)
        crowd.remove(crowd.done)
    return Corner(t if out == people else np.inf, deepest, outside)


@dataclass
class Bottleneck:
    """Test 12: seconds until the room was empty, the flow through the corridor (people a
    second, between the first and the last one through), the most people ever within 2 m
    before its entrance, and the deepest any reached into a wall (m)."""

    seconds: float
    flow: float
    crowded: int
    deepest: float


def bottleneck(people: int = 60, seed: int = 0, limit_s: float = 300.0) -> Bottleneck:
    """Test 12 (shortened): `people` in a 10 m x 10 m room leave through a corridor 1 m wide
    and 5 m long in the middle of its east wall."""
    s = [[[0, 0], [10, 0]], [[0, 10], [10, 10]], [[0, 0], [0, 10]],
         [[10, 0], [10, 4.5]], [[10, 5.5], [10, 10]],
         [[10, 4.5], [15, 4.5]], [[10, 5.5], [15, 5.5]]]  # fmt: skip
    walls = Walls(np.array(s, dtype=float))
    crowd = Crowd(walls=walls, seed=seed)
    start = scatter(people, (0.3, 0.3), (9.7, 9.7), 0.42, crowd.rng)
    crowd.add(start, [np.array([[9.6, 5.0], [16.0, 5.0]])] * people)
    times, t, crowded, deepest = [], 0.0, 0, -np.inf
    while len(crowd) and t < limit_s:
        before = crowd.x[:, 0] < 12.5
        crowd.step(DT)
        t += DT
        through = before & (crowd.x[:, 0] >= 12.5)
        times += [t] * int(through.sum())
        near = np.hypot(crowd.x[:, 0] - 10, crowd.x[:, 1] - 5) <= 2
        crowded = max(crowded, int((near & (crowd.x[:, 0] < 10)).sum()))
        who, _, _, dist = walls.near(crowd.x)
        if len(dist):
            deepest = max(deepest, float((crowd.radius[who] - dist).max()))
        crowd.remove(crowd.ids[crowd.x[:, 0] > 15.5])
    flow = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
    return Bottleneck(t if not len(crowd) else np.inf, flow, crowded, deepest)
