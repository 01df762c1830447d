"""Compiled turning of omnidirectional robots towards their goal's yaw (Numba; `fleetsim.jit`).

`omni_turn` is `fleetsim.control.omni.turn` for the rows `MotionSystem` drives compiled, in
place on the simulation's tables, in three passes over the rows with NumPy's arctangent and
sines between them (Numba's differ from NumPy's vectorised ones in the last bit on some
machines): the yaw's arguments, the turn (the same formulas in the same order as `turn`),
the quaternion. So a run gives the NumPy path's numbers to the last bit. A large fleet's
rows run in two halves on two threads (`fleetsim.parallel`), each half through all three
passes and NumPy's functions (which let go of the GIL) on its own: one hand-over a step.

Most robots that align with their goal's yaw hold it: the turn lands on the goal's yaw every
step and leaves the robot as it was. A row whose last turn left it as it was is remembered
with that turn's inputs (its quaternion, yaw rate, goal's yaw and limits bit for bit, whether
it aligns); while they are the same, the turn would give the same answer, so the row
is skipped, arctangent, sines and all. Anything that changes an input (a new goal, a pose set
by hand, a speed factor) makes the row turn again. The inputs are written down only for a row
the turn left as it was (a row still turning has nothing to compare them with).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from fleetsim import parallel
from fleetsim.control.trapezoid import LAND_EPS
from fleetsim.jit import compiled

TWO_PI = 2 * np.pi
TURN_MIN_ROWS = 4096  # below, NumPy's turn costs less than the three kernels' calls


class TurnMemory:
    """What the last turn of each agent row was given, for the rows it left as they were."""

    def __init__(self, capacity: int = 0) -> None:
        self.dt = float("nan")
        self.turned = 0  # rows the last step turned (the rest of those aligning held)
        self.held = np.zeros(capacity, dtype=np.bool_)  # the row's last turn changed nothing
        self.q = np.zeros((capacity, 4), dtype=np.int64)  # its inputs: the quaternion's bits,
        self.scalars = np.zeros((capacity, 3), dtype=np.int64)  # the yaw rate's, goal yaw's,
        self.w = np.zeros(capacity)  # max alpha's bits; max w (scaled)
        self.align = np.zeros(capacity, dtype=np.bool_)
        self.left = np.zeros(capacity)  # the yaw left it gave

    def fit(self, rows: int, dt: float) -> None:
        """Room for `rows` agent rows; forget everything if the timestep changed."""
        if dt != self.dt:
            self.held[:] = False
            self.dt = dt
        if rows > self.held.size:
            grown = TurnMemory(max(rows, 2 * self.held.size))
            for name in ("held", "q", "scalars", "w", "align", "left"):
                getattr(grown, name)[: self.held.size] = getattr(self, name)
            self.held, self.q, self.scalars, self.w = grown.held, grown.q, grown.scalars, grown.w
            self.align, self.left = grown.align, grown.left


def omni_turn(
    rows: np.ndarray,
    body_rows: np.ndarray,
    a: Any,
    b: Any,
    dt: float,
    memory: TurnMemory,
) -> np.ndarray:
    """One step of the turns of the agent rows `rows` (their bodies at `body_rows`) that align
    with their goal's yaw or still have a yaw rate, in place on the agent table's columns `a`
    (yaw_rate; goal_yaw, align, max_w, speed_scale, max_alpha read) and the body table's `b`
    (quat). Returns the yaw left (N,), as `turn` (0 for rows not turning). Needs Numba and
    float64 C-contiguous columns."""
    select, turn, write = compiled(_select), compiled(_turn_rows), compiled(_write_rows)
    assert select is not None and turn is not None and write is not None
    n = len(rows)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    body_rows = np.ascontiguousarray(body_rows, dtype=np.int64)
    memory.fit(int(rows.max()) + 1 if n else 0, dt)
    q, rate = b["quat"], a["yaw_rate"]
    limits = (a["goal_yaw"], a["align"], a["max_w"], a["speed_scale"], a["max_alpha"])
    yaw_left, picked = np.zeros(n), np.empty(n, dtype=np.int64)
    ys, yc, rate_in = np.empty(n), np.empty(n), np.empty(n)
    held = (memory.held, memory.q, memory.scalars, memory.w, memory.align, memory.left)
    bits = tuple(x.view(np.int64) for x in (q, rate, a["goal_yaw"], a["max_alpha"]))

    def part(start: int, stop: int) -> int:  # rows start..stop, start to end (both cores:
        s = slice(start, stop)  # two halves, each compacting into its own stretch)
        here, bodies, left = rows[s], body_rows[s], yaw_left[s]
        mine, y_sin, y_cos, rate_was = picked[s], ys[s], yc[s], rate_in[s]
        m = int(
            select(here, bodies, q, rate, *limits, *bits, *held, mine, y_sin, y_cos, rate_was, left)
        )
        if m == 0:
            return 0
        mine = mine[:m]
        yaw = np.arctan2(y_sin[:m], y_cos[:m])  # quat.yaw_of
        half = np.empty(m)
        turn(here, mine, rate, *limits, float(dt), yaw, half, left)
        sin, cos = np.sin(half), np.cos(half)  # quat.from_yaw of the wrapped yaw
        write(here, bodies, mine, q, rate, *limits, *bits, sin, cos, rate_was, left, *held)
        return m

    halves = parallel.halves(n, parallel.ROW_KERNEL_ROWS)
    memory.turned = sum(parallel.run([functools.partial(part, *h) for h in halves]))
    return yaw_left


def _select(
    rows: Any,
    body_rows: Any,
    q: Any,
    rate: Any,
    goal_yaw: Any,
    align: Any,
    max_w: Any,
    scale: Any,
    max_alpha: Any,
    q_bits: Any,
    rate_bits: Any,
    goal_yaw_bits: Any,
    max_alpha_bits: Any,
    held: Any,
    held_q: Any,
    held_scalars: Any,
    held_w: Any,
    held_align: Any,
    held_left: Any,
    picked: Any,
    ys: Any,
    yc: Any,
    rate_in: Any,
    yaw_left: Any,
) -> int:
    """The rows that turn this step (aligning, or with a yaw rate; not held as they were) into
    `picked` (their places in `rows`) with the arguments of `quat.yaw_of`'s arctangent; the
    held rows' yaw left. Returns how many turn."""

    def _same(x: float, y: float) -> bool:  # the same bits (NaN never: it is turned again)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)

    m = 0
    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        if not (align[r] or rate[r] != 0.0):
            continue
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
            and _same(held_w[r], max_w[r] * scale[r])
        ):
            yaw_left[k] = held_left[r]
            continue
        x, y, z, w = q[b, 0], q[b, 1], q[b, 2], q[b, 3]
        ys[m], yc[m] = 2 * (w * z + x * y), 1 - 2 * (y * y + z * z)
        picked[m], rate_in[m] = k, rate[r]
        m += 1
    return m


def _turn_rows(
    rows: Any,
    picked: Any,
    rate: Any,
    goal_yaw: Any,
    align: Any,
    max_w_col: Any,
    scale: Any,
    max_alpha_col: Any,
    dt: float,
    yaw: Any,
    half: Any,
    yaw_left: Any,
) -> None:
    """`omni.turn` of the picked rows (their yaw from `yaw`): the new yaw rate into `rate` in
    place, half the new wrapped yaw into `half`, the yaw left into `yaw_left`."""

    def _braking(distance: float, accel: float, dt: float) -> float:  # braking_speed
        u = accel * dt
        k = np.floor((np.sqrt(1.0 + 8.0 * distance / (dt * u)) - 1.0) / 2.0)
        return float((distance / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0))

    def _wrap(angle: float) -> float:  # quat.wrap_angle: fmod only off [-pi, pi), where
        r = angle + np.pi  # it would return r itself
        return (r if 0.0 <= r < TWO_PI else r % TWO_PI) - np.pi

    def _sign(x: float) -> float:  # np.sign
        return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)

    for j in range(picked.shape[0]):
        k = picked[j]
        r = rows[k]
        max_w, max_alpha, aligns = max_w_col[r] * scale[r], max_alpha_col[r], align[r]
        err = _wrap(goal_yaw[r] - yaw[j]) if aligns else 0.0
        u = max_alpha * dt  # next_rate
        brake = _braking(abs(err), max_alpha, dt)
        target = _sign(err) * min(max_w, brake)
        new_rate = min(max(target, rate[r] - u), rate[r] + u)
        lands = (  # turn_lands_on
            aligns
            and abs(new_rate * dt) >= abs(err) - LAND_EPS
            and _sign(new_rate) == _sign(err)
            and abs(new_rate) <= brake + LAND_EPS
        )
        new_yaw = goal_yaw[r] if lands else yaw[j] + new_rate * dt
        rate[r] = err / dt if lands else new_rate
        yaw_left[k] = 0.0 if (lands or not aligns) else abs(_wrap(goal_yaw[r] - new_yaw))
        half[j] = _wrap(new_yaw) / 2


def _write_rows(
    rows: Any,
    body_rows: Any,
    picked: Any,
    q: Any,
    rate: Any,
    goal_yaw: Any,
    align: Any,
    max_w: Any,
    scale: Any,
    max_alpha: Any,
    q_bits: Any,
    rate_bits: Any,
    goal_yaw_bits: Any,
    max_alpha_bits: Any,
    sin: Any,
    cos: Any,
    rate_in: Any,
    yaw_left: Any,
    held: Any,
    held_q: Any,
    held_scalars: Any,
    held_w: Any,
    held_align: Any,
    held_left: Any,
) -> None:
    """The picked rows' new quaternions (`quat.from_yaw`), and what each turn was given when
    it left its row as it was (the same quaternion, bit for bit, and the same yaw rate)."""

    def _same(x: float, y: float) -> bool:  # the same bits (NaN never: it is turned again)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)

    for j in range(picked.shape[0]):
        k = picked[j]
        r, b = rows[k], body_rows[k]
        held[r] = (
            _same(q[b, 0], 0.0)
            and _same(q[b, 1], 0.0)
            and _same(q[b, 2], sin[j])
            and _same(q[b, 3], cos[j])
            and _same(rate_in[j], rate[r])
        )  # the turn left the row as it was
        q[b, 0], q[b, 1], q[b, 2], q[b, 3] = 0.0, 0.0, sin[j], cos[j]
        if not held[r]:
            continue  # (what it was given is read only for a held row)
        held_q[r, 0], held_q[r, 1] = q_bits[b, 0], q_bits[b, 1]
        held_q[r, 2], held_q[r, 3] = q_bits[b, 2], q_bits[b, 3]
        held_scalars[r, 0] = rate_bits[r]
        held_scalars[r, 1] = goal_yaw_bits[r]
        held_scalars[r, 2] = max_alpha_bits[r]
        held_w[r] = max_w[r] * scale[r]
        held_align[r] = align[r]
        held_left[r] = yaw_left[k]
