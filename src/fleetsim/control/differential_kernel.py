"""Compiled differential-drive driving for large fleets (Numba; see `fleetsim.jit`).

`differential_drive` is `fleetsim.control.differential.step_differential` in place on the
simulation's tables, in two passes over the rows instead of about sixty array operations: the
turn (new heading and yaw rate), then the drive along the new heading, writing the quaternion.
The sines and arctangents are NumPy's, between the passes (Numba's `arctan2` differs from
NumPy's vectorised one in the last bit on some machines), and the rest evaluates the same
formulas in the same order, so a run gives the NumPy path's numbers to the last bit. One pair
of sines (of half the wrapped yaw) serves both the heading and the quaternion. A fleet of tens
of thousands runs in two halves on two threads (`fleetsim.parallel`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fleetsim import parallel
from fleetsim.control.differential import ALIGNED_RAD
from fleetsim.control.trapezoid import LAND_EPS
from fleetsim.jit import compiled

TWO_PI = 2 * np.pi


LIMITS = ("max_v", "speed_scale", "leg_v", "max_a", "max_w", "max_alpha")  # agent columns


def differential_drive(
    rows: np.ndarray, body_rows: np.ndarray, a: Any, b: Any, dt: float, passing: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """One step of the agent rows `rows` (their bodies at `body_rows`) turning towards and
    driving to their goals, in place on the agent table's columns `a` (vel, yaw_rate, goal,
    goal_yaw, align; the limits read from it as `MotionSystem` works them out: max v scaled
    and capped by the leg's, max w scaled) and the body table's `b` (pos, quat); `passing`
    (the speed kept through a waypoint goal; None: none) per row of `rows`. Returns (distance
    left, yaw left), as `step_differential`. Needs Numba and float64 C-contiguous columns."""
    n = len(rows)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    body_rows = np.ascontiguousarray(body_rows, dtype=np.int64)
    lim = tuple(a[name] for name in LIMITS)
    through = np.zeros(n) if passing is None else np.ascontiguousarray(passing, dtype=np.float64)
    dist_left, yaw_left = np.empty(n), np.empty(n)
    # Every array the parts work in, made here: a helper thread's own allocations would stay
    # in its own heap (glibc keeps an arena a thread), tens of megabytes at 100,000 rows.
    scratch, aligned = [np.empty(n) for _ in range(11)], np.empty(n, dtype=np.bool_)

    def part(start: int, stop: int) -> None:  # rows start..stop (both cores: two halves)
        s = slice(start, stop)
        _drive_part(
            rows[s],
            body_rows[s],
            a,
            b,
            lim,
            dt,
            through[s],
            [x[s] for x in scratch],
            aligned[s],
            dist_left[s],
            yaw_left[s],
        )

    parallel.run(
        [functools.partial(part, *h) for h in parallel.halves(n, parallel.ROW_KERNEL_ROWS)]
    )
    return dist_left, yaw_left


def _drive_part(
    rows: np.ndarray,
    body_rows: np.ndarray,
    a: Any,
    b: Any,
    lim: tuple[np.ndarray, ...],
    dt: float,
    through: np.ndarray,
    scratch: list[np.ndarray],
    aligned: np.ndarray,
    dist_left: np.ndarray,
    yaw_left: np.ndarray,
) -> None:
    """`differential_drive` of some of the rows, into `dist_left` and `yaw_left`, working in
    `scratch` (11 arrays a row each) and `aligned`."""
    angles, turn, drive = compiled(_angle_args), compiled(_turn_rows), compiled(_drive_rows)
    assert angles is not None and turn is not None and drive is not None
    pos, goal, q = b["pos"], a["goal"], b["quat"]
    # the goal's offset (y, x) and quat.yaw_of's two arguments; then what is worked out
    dy, dx, ys, yc, heading, yaw, new_yaw, new_speed, half, sin, cos = scratch
    angles(rows, body_rows, pos, goal, q, dy, dx, ys, yc)
    np.arctan2(dy, dx, out=heading)
    np.arctan2(ys, yc, out=yaw)
    turn(
        rows,
        body_rows,
        pos,
        goal,
        a["goal_yaw"],
        a["align"],
        a["vel"],
        a["yaw_rate"],
        yaw,
        heading,
        *lim,
        float(dt),
        through,
        new_yaw,
        new_speed,
        aligned,
        half,
    )
    np.sin(half, out=sin)  # of half the wrapped yaw: heading and quaternion
    np.cos(half, out=cos)
    drive(
        rows,
        body_rows,
        pos,
        goal,
        a["goal_yaw"],
        a["align"],
        a["vel"],
        new_yaw,
        cos,
        sin,
        new_speed,
        aligned,
        a["max_a"],
        float(dt),
        through,
        dist_left,
        yaw_left,
        q,
    )


def _angle_args(
    rows: Any, body_rows: Any, pos: Any, goal: Any, q: Any, dy: Any, dx: Any, ys: Any, yc: Any
) -> None:
    """The arguments of the two arctangents: the goal's offset, and the yaw's as
    `quat.yaw_of` writes them."""
    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        dy[k], dx[k] = goal[r, 1] - pos[b, 1], goal[r, 0] - pos[b, 0]
        x, y, z, w = q[b, 0], q[b, 1], q[b, 2], q[b, 3]
        ys[k], yc[k] = 2 * (w * z + x * y), 1 - 2 * (y * y + z * z)


def _turn_rows(
    rows: Any,
    body_rows: Any,
    pos: Any,
    goal: Any,
    goal_yaw: Any,
    align: Any,
    vel: Any,
    yaw_rate: Any,
    yaw: Any,
    heading: Any,
    max_v_col: Any,
    scale: Any,
    leg_v: Any,
    max_a_col: Any,
    max_w_col: Any,
    max_alpha_col: Any,
    dt: float,
    passing: Any,
    new_yaw: Any,
    new_speed: Any,
    aligned_out: Any,
    half: Any,
) -> None:
    """The turn: the heading wanted, the speed (driving only when aligned) and the yaw rate
    (turning only at rest); the new yaw rate goes into `yaw_rate` in place. The limits come
    from the agent table's columns, worked out as `MotionSystem` does (np.minimum of the
    scaled max v and the leg's, the scaled max w)."""

    def _braking(distance: float, accel: float, dt: float) -> float:  # braking_speed
        u = accel * dt
        k = np.floor((np.sqrt(1.0 + 8.0 * distance / (dt * u)) - 1.0) / 2.0)
        return float((distance / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0))

    def _wrap(angle: float) -> float:  # quat.wrap_angle: fmod only off [-pi, pi), where
        r = angle + np.pi  # it would return r itself
        return (r if 0.0 <= r < TWO_PI else r % TWO_PI) - np.pi

    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        scaled = max_v_col[r] * scale[r]
        max_v = scaled if scaled <= leg_v[r] else leg_v[r]
        max_w, max_a, max_alpha = max_w_col[r] * scale[r], max_a_col[r], max_alpha_col[r]
        dx, dy = goal[r, 0] - pos[b, 0], goal[r, 1] - pos[b, 1]
        dist = np.sqrt(dx * dx + dy * dy)
        at_goal = dist == 0.0
        wanted = (goal_yaw[r] if align[r] else yaw[k]) if at_goal else heading[k]
        err = _wrap(wanted - yaw[k])
        aligned = abs(err) <= ALIGNED_RAD
        speed = np.sqrt(vel[r, 0] * vel[r, 0] + vel[r, 1] * vel[r, 1])
        u = max_a * dt
        # next_speed towards a stop `dist` ahead when aligned, else 0 ahead (brake)
        stop = dist if (aligned and not at_goal) else 0.0
        target = min(max_v, _braking(stop, max_a, dt))
        v = max(min(max(target, speed - u), speed + u), 0.0)
        if passing[k] > 0 and aligned:  # keep up to a waypoint's passing speed
            cruise = max(min(max(passing[k], speed - u), speed + u), 0.0)
            v = max(v, min(cruise, max_v))
        at_rest = speed == 0.0 and v == 0.0
        e = err if at_rest else 0.0
        w = max_alpha * dt
        sign = 1.0 if e > 0 else (-1.0 if e < 0 else 0.0)
        rate_target = sign * min(max_w, _braking(abs(e), max_alpha, dt))
        rate = min(max(rate_target, yaw_rate[r] - w), yaw_rate[r] + w)
        lands = False
        if at_rest and not aligned:  # turn_lands_on
            rate_sign = 1.0 if rate > 0 else (-1.0 if rate < 0 else 0.0)
            err_sign = 1.0 if err > 0 else (-1.0 if err < 0 else 0.0)
            lands = (
                abs(rate * dt) >= abs(err) - LAND_EPS
                and rate_sign == err_sign
                and abs(rate) <= _braking(abs(err), max_alpha, dt) + LAND_EPS
            )
        if lands or aligned:
            new_yaw[k] = wanted
            yaw_rate[r] = err / dt if lands else 0.0
        else:
            new_yaw[k] = yaw[k] + rate * dt
            yaw_rate[r] = rate
        new_speed[k] = v
        aligned_out[k] = aligned
        half[k] = _wrap(new_yaw[k]) / 2  # of the wrapped yaw


def _drive_rows(
    rows: Any,
    body_rows: Any,
    pos: Any,
    goal: Any,
    goal_yaw: Any,
    align: Any,
    vel: Any,
    new_yaw: Any,
    cos: Any,
    sin: Any,
    new_speed: Any,
    aligned: Any,
    max_a: Any,
    dt: float,
    passing: Any,
    dist_left: Any,
    yaw_left: Any,
    q: Any,
) -> None:
    """The drive along the new heading (from `cos`, `sin` of half the wrapped yaw, as
    `differential.heading_of`), landing on the goal when it can stop there; positions,
    velocities and quaternions in place."""

    def _braking(distance: float, accel: float, dt: float) -> float:  # braking_speed
        u = accel * dt
        k = np.floor((np.sqrt(1.0 + 8.0 * distance / (dt * u)) - 1.0) / 2.0)
        return float((distance / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0))

    def _wrap(angle: float) -> float:  # quat.wrap_angle: fmod only off [-pi, pi), where
        r = angle + np.pi  # it would return r itself
        return (r if 0.0 <= r < TWO_PI else r % TWO_PI) - np.pi

    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        fx, fy = cos[k] * cos[k] - sin[k] * sin[k], 2 * sin[k] * cos[k]
        dx, dy = goal[r, 0] - pos[b, 0], goal[r, 1] - pos[b, 1]
        dist = np.sqrt(dx * dx + dy * dy)
        v = new_speed[k]
        step = v * dt
        through = passing[k] > 0 and aligned[k]
        cap = _braking(dist, max_a[r], dt)
        if through:
            cap = max(cap, passing[k])
        lands = aligned[k] and dist != 0.0 and step >= dist - LAND_EPS and v <= cap + LAND_EPS
        if lands:
            pos[b, 0], pos[b, 1] = goal[r, 0], goal[r, 1]
            if not through:
                v = dist / dt
            dist_left[k] = 0.0
        else:
            x, y = pos[b, 0] + fx * step, pos[b, 1] + fy * step
            pos[b, 0], pos[b, 1] = x, y
            lx, ly = goal[r, 0] - x, goal[r, 1] - y
            dist_left[k] = np.sqrt(lx * lx + ly * ly)
        vel[r, 0], vel[r, 1], vel[r, 2] = fx * v, fy * v, 0.0
        yaw_left[k] = abs(_wrap(goal_yaw[r] - new_yaw[k])) if align[r] else 0.0
        q[b, 0], q[b, 1], q[b, 2], q[b, 3] = 0.0, 0.0, sin[k], cos[k]  # quat.from_yaw
