"""The collision-free speed model of pedestrian dynamics (Tordeux, Chraibi and Seyfried, 2016),
on arrays: every person of a crowd moved in one step, with no loop over people.

Each person i walks toward its next waypoint at its free speed v0_i. Its direction is the
desired one plus a push from each neighbour j, a exp((r_i + r_j - s_ij) / D) along the line
from j to i (s_ij the distance between centres), and from each wall and robot near it the
same way (its own a and D), normalised. Its speed is then the one that keeps a time gap T to
what is in front of it: v_i = min(v0_i, max(0, gap_i / T)), gap_i the free distance to the
nearest person, robot or wall ahead (ahead: in front of it and within the width of its body).
A first-order model (speeds, no accelerations): stable at the simulator's 0.1 s step, where a
social-force model needs steps of 0.01 s or less; its time gap gives the fall of speed with
density that pedestrians show (the fundamental diagram), and JuPedSim validates it against the
RiMEA tests. ORCA, the other first-order choice, solves a linear program per person, which
arrays do not do well.

A robot pushes a person from where it will be: the point of its path (driving on at its
velocity) closest to the person, up to `SpeedModel.anticipation` seconds ahead, so people step
out of a coming robot's way before it is on them (the time gap and the contacts stay with
where it is).

Walls and robots are hard limits as well: a move that would cross a wall is not made, and a
person still closer to a wall or a robot than its radius after the move is pushed out of it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.people import kernel, kernel_two
from fleetsim.people.grid import pairs_within
from fleetsim.people.walls import Walls

SKIN_M = 1e-6  # how far beyond touching a push-out leaves a person
MOVE_MARGIN_M = 0.5  # more than anyone moves in a step: pairs found before it hold after it


@dataclass(frozen=True)
class SpeedModel:
    """The model's parameters. The pushes are JuPedSim's defaults for this model; the time gap
    is 0.5 s, where JuPedSim's is 1 s: with 0.5 s the model's speeds in a corridor follow
    Weidmann's fundamental diagram (the RiMEA test 4 of the tests and the guide), with 1 s
    they fall short of it by a third.

    Attributes:
        time_gap: T, s: the headway a person keeps to what is ahead.
        neighbour_strength: a, for other people.
        neighbour_range: D, m, for other people.
        wall_strength: a, for walls.
        wall_range: D, m, for walls.
        robot_strength: a, for robots.
        robot_range: D, m, for robots (wider than people's: robots are given a berth).
        reach: m: people, walls and robots farther than this from a person's centre do not
            act on it.
        arrive: m: a route's last waypoint this near is reached.
        via: m: a waypoint on the way this near is passed (people do not queue to touch it).
        anticipation: s: how far ahead people see a robot coming: a robot pushes a person from
            where it will be closest to them if it drives on, up to this many seconds ahead
            (0: from where it is).
    """

    time_gap: float = 0.5
    neighbour_strength: float = 8.0
    neighbour_range: float = 0.1
    wall_strength: float = 5.0
    wall_range: float = 0.02
    robot_strength: float = 8.0
    robot_range: float = 0.3
    reach: float = 1.5
    arrive: float = 0.3
    via: float = 0.8
    anticipation: float = 1.0

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            least = 0 if name == "anticipation" else 1e-300
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= least):
                raise ConfigError(f"SpeedModel: {name} must be a number > 0, got {value!r}")


@dataclass
class Obstacles:
    """Moving things people avoid, as discs: centres (m, 2), radii (m,), velocities (m, 2)
    (people see where a robot will be: `SpeedModel.anticipation`)."""

    centres: np.ndarray
    radii: np.ndarray
    velocities: np.ndarray

    @classmethod
    def none(cls) -> Obstacles:
        """No obstacles."""
        return cls(np.empty((0, 2)), np.empty(0), np.empty((0, 2)))


@dataclass
class StepResult:
    """A step's outcome: new positions and velocities, each one's distance to its waypoint
    after the step, and who is near a robot (person rows, robot rows, gaps after the step:
    negative is an overlap)."""

    positions: np.ndarray
    velocities: np.ndarray
    remaining: np.ndarray
    robot_pairs: tuple[np.ndarray, np.ndarray, np.ndarray]


def _cross_pairs(
    x: np.ndarray, centres: np.ndarray, radii: np.ndarray, reach: float
) -> tuple[np.ndarray, np.ndarray]:
    """(person, disc) pairs whose gap (between a person's centre and the disc's edge) is
    within `reach`."""
    if not len(centres) or not len(x):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    n = len(x)
    widest = reach + float(radii.max())
    i, j = pairs_within(np.concatenate((x, centres)), widest)
    person, disc = np.where(i < n, i, j), np.where(i < n, j, i) - n
    keep = (np.minimum(i, j) < n) & (np.maximum(i, j) >= n)
    person, disc = person[keep], disc[keep]
    d = x[person] - centres[disc]
    close = np.hypot(d[:, 0], d[:, 1]) - radii[disc] <= reach
    return person[close], disc[close]


def _anticipated(rel: np.ndarray, velocity: np.ndarray, horizon: float) -> np.ndarray:
    """Where each person is relative to a robot (`rel`: person - robot) when the robot, driving
    on at `velocity`, comes closest to where the person is, within `horizon` seconds."""
    if horizon <= 0:
        return rel
    vv = velocity[:, 0] * velocity[:, 0] + velocity[:, 1] * velocity[:, 1]
    moving = vv > 1e-12
    t = np.where(moving, (rel[:, 0] * velocity[:, 0] + rel[:, 1] * velocity[:, 1])
                 / np.where(moving, vv, 1.0), 0.0)  # fmt: skip
    t = np.clip(t, 0.0, horizon)
    out: np.ndarray = rel - velocity * t[:, None]
    return out


def _min_by(owner: np.ndarray, value: np.ndarray, n: int) -> np.ndarray:
    """(n,) the smallest `value` of each owner (inf where none)."""
    out = np.full(n, np.inf)
    if len(owner):
        order = np.lexsort((value, owner))
        first = np.ones(len(order), dtype=bool)
        first[1:] = owner[order][1:] != owner[order][:-1]
        out[owner[order][first]] = value[order][first]
    return out


def step_people(
    x: np.ndarray,
    radius: np.ndarray,
    v0: np.ndarray,
    target: np.ndarray,
    dt: float,
    model: SpeedModel,
    walls: Walls | None = None,
    robots: Obstacles | None = None,
    compiled: bool | None = None,
) -> StepResult:
    """One step of every person: positions `x` (n, 2), radii, free speeds, the waypoints they
    walk to (n, 2) -> a `StepResult` (see the module's text). `compiled`: the compiled step
    (`fleetsim.people.kernel`, with the `[fast]` extra) or the NumPy one; by default the
    compiled one whenever Numba is there."""
    if compiled is not False and len(x):
        fast = _compiled_step(x, radius, v0, target, dt, model, walls, robots)
        if fast is not None:
            return fast
        if compiled:
            raise ConfigError(
                "step_people(compiled=True) needs Numba: pip install 'fleetsim[fast]'"
            )
    n = len(x)
    m = model
    to_target = target - x
    dist = np.hypot(to_target[:, 0], to_target[:, 1])
    e0 = to_target / np.maximum(dist, 1e-12)[:, None]
    e0[dist <= 1e-12] = 0.0
    push = np.zeros((n, 2))
    # -- other people
    i, j = pairs_within(x, m.reach)
    d = x[i] - x[j]
    s = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)
    unit = d / s[:, None]
    contact = radius[i] + radius[j]
    force = m.neighbour_strength * np.exp((contact - s) / m.neighbour_range)
    np.add.at(push, i, force[:, None] * unit)
    np.add.at(push, j, -force[:, None] * unit)
    # -- walls
    if walls is not None:
        wi, wseg, wp, wd = walls.near(x)
        wd = np.maximum(wd, 1e-9)
        wunit = (x[wi] - wp) / wd[:, None]
        wforce = m.wall_strength * np.exp((radius[wi] - wd) / m.wall_range)
        np.add.at(push, wi, wforce[:, None] * wunit)
    # -- robots
    ri = rk = np.empty(0, dtype=np.int64)
    if robots is not None and len(robots.centres):  # (wider: the same pairs after the move)
        ri, rk = _cross_pairs(x, robots.centres, robots.radii, m.reach + MOVE_MARGIN_M)
        rd = x[ri] - robots.centres[rk]
        rs = np.maximum(np.hypot(rd[:, 0], rd[:, 1]), 1e-9)
        ahead = _anticipated(rd, robots.velocities[rk], m.anticipation)
        ps = np.maximum(np.hypot(ahead[:, 0], ahead[:, 1]), 1e-9)
        rforce = m.robot_strength * np.exp((radius[ri] + robots.radii[rk] - ps) / m.robot_range)
        np.add.at(push, ri, rforce[:, None] * ahead / ps[:, None])
    way = e0 + push
    norm = np.hypot(way[:, 0], way[:, 1])
    e = np.where((norm > 1e-12)[:, None], way / np.maximum(norm, 1e-12)[:, None], 0.0)
    # -- the speed: a time gap to what is ahead
    gaps = [np.full(n, np.inf)]
    for a, b, sign in ((i, j, -1.0), (j, i, 1.0)):  # b ahead of a? (d = x[i] - x[j])
        rel = sign * d  # x[b] - x[a]
        ahead = (e[a] * rel).sum(axis=1)
        side = np.abs(e[a, 0] * rel[:, 1] - e[a, 1] * rel[:, 0])
        front = (ahead > 0) & (side <= radius[a] + radius[b])
        gaps.append(_min_by(a[front], (s - contact)[front], n))
    if walls is not None:
        rel = wp - x[wi]
        ahead = (e[wi] * rel).sum(axis=1)
        side = np.abs(e[wi, 0] * rel[:, 1] - e[wi, 1] * rel[:, 0])
        front = (ahead > 0) & (side <= radius[wi])
        gaps.append(_min_by(wi[front], (wd - radius[wi])[front], n))
    if len(ri):
        rel = robots.centres[rk] - x[ri]  # type: ignore[union-attr]
        ahead = (e[ri] * rel).sum(axis=1)
        side = np.abs(e[ri, 0] * rel[:, 1] - e[ri, 1] * rel[:, 0])
        wide = radius[ri] + robots.radii[rk]  # type: ignore[union-attr]
        front = (ahead > 0) & (side <= wide)
        gaps.append(_min_by(ri[front], (rs - wide)[front], n))
    gap = np.minimum.reduce(gaps)
    speed = np.minimum(v0, np.maximum(0.0, gap / m.time_gap))
    speed = np.minimum(speed, dist / dt)  # (no overshooting the waypoint)
    new = x + (speed * dt)[:, None] * e
    if walls is not None:
        new = np.where(walls.crossed(x, new, (wi, wseg))[:, None], x, new)
        by_walls = np.unique(wi)  # (only they can end a step near a wall)
        new = _keep_off_walls(new, radius, walls, by_walls)
    if robots is not None and len(robots.centres):
        pushed = _keep_off_robots(new, radius, robots, ri, rk)
        moved = np.flatnonzero((pushed != new).any(axis=1))
        if walls is not None and len(moved):  # (not through a wall: then a contact)
            across = walls.crossed(new[moved], pushed[moved])
            pushed[moved[across]] = new[moved[across]]
            new = _keep_off_walls(pushed, radius, walls, by_walls)
        else:
            new = pushed
        rd = new[ri] - robots.centres[rk]
        rgap = np.hypot(rd[:, 0], rd[:, 1]) - radius[ri] - robots.radii[rk]
        close = rgap + radius[ri] <= m.reach
        ri, rk, rgap = ri[close], rk[close], rgap[close]
    else:
        rgap = np.empty(0)
    after = np.hypot(*(target - new).T)
    return StepResult(new, (new - x) / dt, after, (ri, rk, rgap))


_work = threading.local()  # (each thread's buffers for the compiled step, kept between steps)


def _compiled_step(
    x: np.ndarray,
    radius: np.ndarray,
    v0: np.ndarray,
    target: np.ndarray,
    dt: float,
    m: SpeedModel,
    walls: Walls | None,
    robots: Obstacles | None,
) -> StepResult | None:
    """`step_people` through the compiled kernel, or None without Numba."""
    if not kernel.available():
        return None
    params = np.array([m.time_gap, m.neighbour_strength, m.neighbour_range, m.wall_strength,
                       m.wall_range, m.robot_strength, m.robot_range, m.reach, MOVE_MARGIN_M,
                       SKIN_M, m.anticipation])  # fmt: skip
    ints = np.empty(0, dtype=np.int64)
    if walls is not None and len(walls.segments):
        seg, index = walls.segments, walls.index_arrays()
    else:
        seg, index = np.empty((0, 2, 2)), (np.zeros(6), ints, ints, ints)
    none = (np.empty((0, 2)), np.empty(0), np.empty((0, 2)))
    rc, rr, rv = (robots.centres, robots.radii, robots.velocities) if robots is not None else none
    f64 = np.ascontiguousarray
    work = getattr(_work, "buffers", None) or kernel.buffers()
    run = kernel_two.step_in_two if kernel_two.wanted(len(x)) else kernel.step_arrays
    out = run(f64(x, dtype=np.float64), f64(radius, dtype=np.float64),
              f64(v0, dtype=np.float64), f64(target, dtype=np.float64), float(dt), params, seg,
              *index, f64(rc, dtype=np.float64), f64(rr, dtype=np.float64),
              f64(rv, dtype=np.float64), work)  # fmt: skip
    assert out is not None
    new, remaining, ri, rk, rgap, _work.buffers = out
    return StepResult(new, (new - x) / dt, remaining, (ri, rk, rgap))


def _keep_off_walls(x: np.ndarray, radius: np.ndarray, walls: Walls, who: np.ndarray) -> np.ndarray:
    """Anyone of `who` nearer a wall than its radius pushed out along the wall's normal
    (twice: a corner's two sides)."""
    out = x
    for _ in range(2):
        if not len(who):
            break
        wi, _, wp, wd = walls.near(out[who])
        wi = who[wi]
        close = wd < radius[wi]
        if not close.any():
            break
        wi, wp, wd = wi[close], wp[close], np.maximum(wd[close], 1e-9)
        depth = radius[wi] - wd + SKIN_M
        shift = np.zeros_like(out)
        np.add.at(shift, wi, (out[wi] - wp) / wd[:, None] * depth[:, None])
        out = out + shift
    return out


def _keep_off_robots(
    x: np.ndarray, radius: np.ndarray, robots: Obstacles, ri: np.ndarray, rk: np.ndarray
) -> np.ndarray:
    """Anyone of the (person, robot) pairs overlapping the robot's disc pushed out of it,
    along the line from its centre."""
    d = x[ri] - robots.centres[rk]
    s = np.hypot(d[:, 0], d[:, 1])
    depth = radius[ri] + robots.radii[rk] - s
    over = depth > 0
    if not over.any():
        return x
    ri, d, s, depth = ri[over], d[over], np.maximum(s[over], 1e-9), depth[over] + SKIN_M
    shift = np.zeros_like(x)
    np.add.at(shift, ri, d / s[:, None] * depth[:, None])
    moved: np.ndarray = x + shift
    return moved
