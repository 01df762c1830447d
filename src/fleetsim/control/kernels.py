"""Compiled omnidirectional driving for large fleets (Numba; see `fleetsim.jit`).

`omni_translate` is the translation part of `fleetsim.control.omni.step_omni` in one pass
over the rows instead of about thirty array operations: the same formulas, evaluated in the
same order, so it gives the NumPy path's numbers. `omni_drive` does the same in place on the
simulation's tables (no gathered copies, no write-back); the same pass also picks the rows
that turn towards their goal's yaw for `fleetsim.control.omni_turn` (`omni_turn.drive`), while
the rows are at hand. `pass_speeds` is `MotionSystem._pass_speeds` (the speed kept through a
path's waypoints).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Protocol

import numpy as np

from fleetsim import jit, parallel
from fleetsim.control.trapezoid import LAND_EPS
from fleetsim.jit import MIN_ROWS, compiled
from fleetsim.state.agents import DriveState, MotionMode

DRIVE_GOAL = int(DriveState.GOAL)  # (plain ints for the compiled code)
MODE_DIFFERENTIAL = int(MotionMode.DIFFERENTIAL)


def usable(n: int) -> bool:
    """Whether `n` rows should drive compiled."""
    return jit.enough(n, MIN_ROWS) and compiled(_omni_rows) is not None


def omni_translate(
    pos: np.ndarray,
    vel: np.ndarray,
    goal: np.ndarray,
    max_v: np.ndarray,
    max_a: np.ndarray,
    dt: float,
    passing: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(new positions, new velocities, distance left, landed) of rows driving straight to
    `goal` at up to `max_v` and `max_a` (`passing`: the speed each may keep through its goal,
    a waypoint); None for fewer than `MIN_ROWS` rows (in a process not `jit.warm`) or without
    Numba (the caller uses NumPy)."""
    n = len(pos)
    if not usable(n):
        return None
    out_pos = np.array(pos, dtype=np.float64, order="C")
    out_vel = np.array(vel, dtype=np.float64, order="C")
    every = np.arange(n)
    limits = (max_v, np.ones(n), np.full(n, np.inf), max_a)  # (max v * 1, capped by inf: max v)
    dist_left, lands = omni_drive(every, every, out_pos, out_vel, goal, limits, dt, passing)
    return out_pos, out_vel, dist_left, lands


def omni_drive(
    rows: np.ndarray,
    body_rows: np.ndarray,
    pos: np.ndarray,
    vel: np.ndarray,
    goal: np.ndarray,
    limits: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    dt: float,
    passing: np.ndarray | None = None,
    turns: Turns | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One step of the agent rows `rows` (their bodies at `body_rows`) driving straight to
    their goals, in place: positions pos[body_rows], velocities vel[rows], goals goal[rows];
    `limits` the columns max v, speed scale, leg v and max a, read at `rows` (the speed limit
    is min(max v * speed scale, leg v), as `MotionSystem` works it out); `passing` (the speed
    kept through a waypoint goal: none without it) per row of `rows`; `turns`: the rows'
    turns, picked in the same pass and finished after it (`omni_turn.drive`). Returns
    (distance left, landed). Needs Numba (`compiled(_omni_rows)` not None) and float64
    C-contiguous tables."""
    kernel = compiled(_omni_rows)
    assert kernel is not None
    n = len(rows)
    dist_left, lands = np.empty(n), np.empty(n, dtype=np.bool_)
    columns = [np.ascontiguousarray(x, dtype=np.float64) for x in limits]
    through = np.zeros(n) if passing is None else np.ascontiguousarray(passing, dtype=np.float64)
    goal = np.ascontiguousarray(goal, dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    body_rows = np.ascontiguousarray(body_rows, dtype=np.int64)

    def part(start: int, stop: int) -> None:  # rows start..stop (both cores: two halves)
        s = slice(start, stop)
        drive = (pos, vel, goal, *columns, float(dt), through[s], passing is not None)
        picking = _picking_nothing() if turns is None else turns.arguments(s)
        picked = kernel(rows[s], body_rows[s], *drive, dist_left[s], lands[s], *picking)
        if turns is not None:
            turns.finish(s, int(picked))

    parallel.run(
        [functools.partial(part, *h) for h in parallel.halves(n, parallel.ROW_KERNEL_ROWS)]
    )
    return dist_left, lands


class Turns(Protocol):
    """The turns of the rows `omni_drive` drives (`omni_turn.drive`): what its kernel needs to
    pick the rows that turn, for a stretch of the rows, and the rest of their turn, after."""

    def arguments(self, rows: slice) -> tuple[Any, ...]:
        """`_omni_rows`'s arguments after `lands` for the rows `rows` (picking: True)."""
        ...

    def finish(self, rows: slice, picked: int) -> None:
        """The rest of the turn of the rows `rows`, `picked` of which turn."""
        ...


@functools.cache
def _picking_nothing() -> tuple[Any, ...]:
    """`_omni_rows`'s arguments after `lands` when it picks no row (empty arrays of their
    types)."""
    f, b, i = np.zeros(0), np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.int64)
    f2, i2 = np.zeros((0, 4)), np.zeros((0, 4), dtype=np.int64)
    columns = (f2, f, f, b, f, f)  # quat, yaw rate, goal yaw, align, max w, max alpha
    bits = (i2, i, i, i)
    held = (b, i2, np.zeros((0, 3), dtype=np.int64), f, b, f)
    laid_out = (i, f, f, f, f, f, f, b, f)
    return False, columns, bits, held, laid_out


def _omni_rows(
    rows: Any,
    body_rows: Any,
    pos: Any,
    vel: Any,
    goal: Any,
    max_v_col: Any,
    speed_scale: Any,
    leg_v: Any,
    max_a: Any,
    dt: float,
    passing: Any,
    through: bool,
    dist_left: Any,
    lands: Any,
    picking: bool,
    turn_columns: Any,
    turn_bits: Any,
    held_turns: Any,
    laid_out: Any,
) -> int:
    """The drive of `omni_drive`; with `picking`, the rows that turn this step (aligning
    with their goal's yaw, or with a yaw rate; not held as they were: `omni_turn.TurnMemory`)
    in order into `laid_out`'s first (their places in `rows`), with what their turn reads
    side by side in the others: the arguments of `quat.yaw_of`'s arctangent, the yaw rate,
    goal yaw, top yaw rate (scaled), angular acceleration and whether they align; the held
    rows' yaw left into its last. `turn_columns`: the body table's quat, the agent table's
    yaw rate, goal yaw, align, max w and max alpha; `turn_bits`: the quat's, yaw rate's,
    goal yaw's and max alpha's bits (int64 views); `held_turns`: `TurnMemory`'s held, q,
    scalars, w, align and left. Returns how many rows turn."""
    q, rate, goal_yaw, align, max_w, max_alpha = turn_columns
    q_bits, rate_bits, goal_yaw_bits, max_alpha_bits = turn_bits
    held, held_q, held_scalars, held_w, held_align, held_left = held_turns
    picked, ys, yc, rate_in, goal_in, w, alpha, aligns, yaw_left = laid_out

    def _same(x: float, y: float) -> bool:  # the same bits (NaN never: it is turned again)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)

    m = 0
    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        scaled = max_v_col[r] * speed_scale[r]
        max_v = scaled if scaled <= leg_v[r] else leg_v[r]  # np.minimum
        d0, d1, d2 = goal[r, 0] - pos[b, 0], goal[r, 1] - pos[b, 1], goal[r, 2] - pos[b, 2]
        dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        floor_dist = max(dist, 1e-300)
        e0, e1, e2 = d0 / floor_dist, d1 / floor_dist, d2 / floor_dist  # direction
        u = max_a[r] * dt  # braking_speed
        steps = np.floor((np.sqrt(1.0 + 8.0 * dist / (dt * u)) - 1.0) / 2.0)
        cap = (dist / dt + u * steps * (steps + 1.0) / 2.0) / (steps + 1.0)
        if through:  # slow to the passing speed at most
            cap = max(cap, passing[k])
        wanted = min(max_v, cap)
        c0, c1, c2 = e0 * wanted - vel[r, 0], e1 * wanted - vel[r, 1], e2 * wanted - vel[r, 2]
        norm = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2)  # limit_vector_change
        scale = min(1.0, u / max(norm, 1e-300))
        v0, v1, v2 = vel[r, 0] + c0 * scale, vel[r, 1] + c1 * scale, vel[r, 2] + c2 * scale
        s0, s1, s2 = v0 * dt, v1 * dt, v2 * dt
        along = s0 * e0 + s1 * e1 + s2 * e2
        o0, o1, o2 = s0 - along * e0, s1 - along * e1, s2 - along * e2
        off_line = np.sqrt(o0 * o0 + o1 * o1 + o2 * o2)
        speed = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        landed = (along >= dist - LAND_EPS) and (off_line <= LAND_EPS) and (speed <= cap + LAND_EPS)
        lands[k] = landed
        if landed:
            pos[b, 0], pos[b, 1], pos[b, 2] = goal[r, 0], goal[r, 1], goal[r, 2]
            if through and passing[k] > 0:  # through a waypoint, at its passing speed at most
                keep = min(speed, passing[k]) / max(speed, 1e-300)
                vel[r, 0], vel[r, 1], vel[r, 2] = v0 * keep, v1 * keep, v2 * keep
            else:
                vel[r, 0], vel[r, 1], vel[r, 2] = d0 / dt, d1 / dt, d2 / dt
            dist_left[k] = 0.0
        else:
            p0, p1, p2 = pos[b, 0] + s0, pos[b, 1] + s1, pos[b, 2] + s2
            pos[b, 0], pos[b, 1], pos[b, 2] = p0, p1, p2
            vel[r, 0], vel[r, 1], vel[r, 2] = v0, v1, v2
            l0, l1, l2 = goal[r, 0] - p0, goal[r, 1] - p1, goal[r, 2] - p2
            dist_left[k] = np.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
        if not picking or not (align[r] or rate[r] != 0.0):
            continue
        w_r = max_w[r] * speed_scale[r]
        if (
            held[r]
            and held_q[r, 3] == q_bits[b, 3]
            and held_q[r, 2] == q_bits[b, 2]
            and held_q[r, 1] == q_bits[b, 1]
            and held_q[r, 0] == q_bits[b, 0]
            and held_scalars[r, 0] == rate_bits[r]
            and held_scalars[r, 1] == goal_yaw_bits[r]
            and held_scalars[r, 2] == max_alpha_bits[r]
            and held_align[r] == align[r]
            and _same(held_w[r], w_r)
        ):
            yaw_left[k] = held_left[r]
            continue
        x, y, z, qw = q[b, 0], q[b, 1], q[b, 2], q[b, 3]
        ys[m], yc[m] = 2 * (qw * z + x * y), 1 - 2 * (y * y + z * z)
        picked[m], rate_in[m], goal_in[m], w[m] = k, rate[r], goal_yaw[r], w_r
        alpha[m], aligns[m] = max_alpha[r], align[r]
        m += 1
    return m


def pass_speeds(
    rows: np.ndarray, pos: np.ndarray, max_v: np.ndarray, table: dict[str, Any], dt: float
) -> np.ndarray | None:
    """`MotionSystem._pass_speeds` compiled: the speed (N,) each of the agent rows `rows` (at
    `pos`, (N, 3), with speed limits `max_v`) may keep through its goal, a path's waypoint; None
    when no row has one. `table`: the agent table's columns."""
    kernel = compiled(_pass_rows)
    assert kernel is not None
    out = np.empty(len(rows))
    through = kernel(
        np.ascontiguousarray(rows, dtype=np.int64),
        np.ascontiguousarray(pos, dtype=np.float64),
        table["goal"],
        table["next_dir"],
        table["next_v"],
        table["mode"],
        table["state"],
        np.ascontiguousarray(max_v, dtype=np.float64),
        table["max_a"],
        float(dt),
        out,
    )
    return out if through else None


def _pass_rows(
    rows: Any,
    pos: Any,
    goal: Any,
    next_dir: Any,
    next_v: Any,
    mode: Any,
    state: Any,
    max_v: Any,
    max_a: Any,
    dt: float,
    out: Any,
) -> int:
    through_rows = 0
    for k in range(rows.shape[0]):
        r = rows[k]
        n0, n1, n2 = next_dir[r, 0], next_dir[r, 1], next_dir[r, 2]
        through = (n0 != 0.0 or n1 != 0.0 or n2 != 0.0) and state[r] == DRIVE_GOAL
        through_rows += through
        d0, d1, d2 = goal[r, 0] - pos[k, 0], goal[r, 1] - pos[k, 1], goal[r, 2] - pos[k, 2]
        dist = max(np.sqrt(d0 * d0 + d1 * d1 + d2 * d2), 1e-300)
        cos = min(max((d0 * n0 + d1 * n1 + d2 * n2) / dist, -1.0), 1.0)
        half_sin = np.sqrt((1.0 - cos) / 2.0)
        u = max_a[r] * dt
        corner = u / max(2.0 * half_sin, 1e-300)
        if mode[r] == MODE_DIFFERENTIAL:
            corner = np.inf if cos >= 1.0 - 1e-12 else 0.0
        speed = min(min(max_v[k], next_v[r]), corner)
        out[k] = speed if (through and speed >= u) else 0.0
    return through_rows
