"""Compiled turning of omnidirectional robots towards their goal's yaw (Numba; `fleetsim.jit`).

`omni_turn` is `fleetsim.control.omni.turn` for the rows `MotionSystem` drives compiled, in
place on the simulation's tables, in three passes with NumPy's arctangent and sines between
them (Numba's arctangent differs from NumPy's vectorised one in the last bit; the C library's
sines, which the last pass takes itself, are NumPy's on most machines, and are used where a
trial at first use finds them so, `sines_agree`): the
rows that turn are picked and what their turn reads is laid side by side (`_select`); the
turn itself, the same formulas in the same order as `turn`, runs over those arrays without
branches, so the compiler makes vector instructions of it (eight rows at a time with
AVX-512; `_turn_packed`); the quaternions and yaw rates are written back (`_write_rows`).
So a run gives the NumPy path's numbers to the last bit. A large fleet's rows run in two
halves on two threads (`fleetsim.parallel`), each half through all three passes and NumPy's
functions (which let go of the GIL) on its own: one hand-over a step.

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
from fleetsim.control import omni
from fleetsim.control.trapezoid import LAND_EPS
from fleetsim.jit import compiled

TWO_PI = 2 * np.pi
PACKED = 9  # the turning rows' values side by side (`_select`'s, the turn's)


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
    select, turn, write = compiled(_select), compiled(_turn_packed), compiled(_write_rows)
    assert select is not None and turn is not None and write is not None
    n = len(rows)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    body_rows = np.ascontiguousarray(body_rows, dtype=np.int64)
    memory.fit(int(rows.max()) + 1 if n else 0, dt)
    q, rate = b["quat"], a["yaw_rate"]
    limits = (a["goal_yaw"], a["align"], a["max_w"], a["speed_scale"], a["max_alpha"])
    yaw_left, picked = np.zeros(n), np.empty(n, dtype=np.int64)
    packed, aligns = np.empty((PACKED, n)), np.empty(n, dtype=np.bool_)
    held = (memory.held, memory.q, memory.scalars, memory.w, memory.align, memory.left)
    bits = tuple(x.view(np.int64) for x in (q, rate, a["goal_yaw"], a["max_alpha"]))

    def part(start: int, stop: int) -> int:  # rows start..stop, start to end (both cores:
        s = slice(start, stop)  # two halves, each compacting into its own stretch)
        here, bodies, left = rows[s], body_rows[s], yaw_left[s]
        mine, aligned = picked[s], aligns[s]
        ys, yc, was, goal, w, alpha, half, new_rate, left_of = packed[:, s]
        laid_out = (mine, ys, yc, was, goal, w, alpha, aligned, left)  # (`_select`'s outputs)
        m = int(select(here, bodies, q, rate, *limits, *bits, *held, *laid_out))
        if m == 0:
            return 0
        inputs = (was[:m], goal[:m], aligned[:m], w[:m], alpha[:m])
        yaw = np.arctan2(ys[:m], yc[:m], out=ys[:m])  # quat.yaw_of
        outputs = (new_rate[:m], half[:m], left_of[:m])
        if turn(yaw, *inputs, float(dt), *outputs):  # an angle off its usual range: NumPy's
            wrapped, outputs[0][:], outputs[2][:] = omni.turn(yaw, *inputs, dt)
            np.divide(wrapped, 2, out=outputs[1])
        if libm:  # (the write pass takes the sines itself: the same bits as NumPy's here)
            sin, cos = half[:m], half[:m]
        else:  # quat.from_yaw of the wrapped yaw
            sin, cos = np.sin(half[:m]), np.cos(half[:m])
        as_bits = (x.view(np.int64) for x in (new_rate[:m], goal[:m], alpha[:m]))
        given = (*inputs, *outputs[::2], libm, sin, cos, bits[0], *as_bits)
        write(here, bodies, mine[:m], q, rate, *given, *held, left)
        return m

    libm = sines_agree()
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
    goal: Any,
    w: Any,
    alpha: Any,
    aligns: Any,
    yaw_left: Any,
) -> int:
    """The rows that turn this step (aligning, or with a yaw rate; not held as they were) into
    `picked` (their places in `rows`) with what their turn reads, side by side: the arguments
    of `quat.yaw_of`'s arctangent, the yaw rate, goal yaw, top yaw rate (scaled), angular
    acceleration and whether they align. The held rows' yaw left. Returns how many turn."""

    def _same(x: float, y: float) -> bool:  # the same bits (NaN never: it is turned again)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)

    m = 0
    for k in range(rows.shape[0]):
        r, b = rows[k], body_rows[k]
        if not (align[r] or rate[r] != 0.0):
            continue
        w_r = max_w[r] * scale[r]
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
        picked[m], rate_in[m], goal[m], w[m] = k, rate[r], goal_yaw[r], w_r
        alpha[m], aligns[m] = max_alpha[r], align[r]
        m += 1
    return m


def _turn_packed(
    yaw: Any,
    rate: Any,
    goal_yaw: Any,
    align: Any,
    max_w: Any,
    max_alpha: Any,
    dt: float,
    new_rate: Any,
    half: Any,
    yaw_left: Any,
) -> int:
    """`omni.turn` of rows side by side (yaw, yaw rate, goal yaw, whether they align, top yaw
    rate, angular acceleration): the new yaw rate, half the new wrapped yaw and the yaw left,
    with the same formulas in the same order, in one pass without branches or calls, which
    the compiler turns into vector instructions. `quat.wrap_angle`'s remainder is written out
    for angles in [-3 pi, 3 pi), where it is the angle less or plus one turn, exactly (above
    the range by Sterbenz's lemma; below it, the sum NumPy's remainder makes): returns how
    many angles fell outside (the caller then runs `omni.turn` instead)."""

    def _turn(r: float) -> float:  # r % TWO_PI for r in [-TWO_PI, 2 TWO_PI): less or plus one
        return r - TWO_PI if r >= TWO_PI else (r + TWO_PI if r < 0.0 else r)  # turn, exactly

    def _outside(r: float) -> bool:  # where _turn is not r % TWO_PI (NaN too)
        return not (-TWO_PI <= r < 2 * TWO_PI)

    off = 0
    for j in range(yaw.shape[0]):
        aligns, goal = align[j], goal_yaw[j]
        e = goal - yaw[j] + np.pi  # (wrap_angle's argument, shifted)
        err = (_turn(e) - np.pi) if aligns else 0.0
        u = max_alpha[j] * dt  # next_rate, with braking_speed
        distance = abs(err)
        k = np.floor((np.sqrt(1.0 + 8.0 * distance / (dt * u)) - 1.0) / 2.0)
        brake = (distance / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0)
        sign = 1.0 if err > 0 else (-1.0 if err < 0 else 0.0)  # np.sign
        target = sign * min(max_w[j], brake)
        rate_j = rate[j]
        turned = min(max(target, rate_j - u), rate_j + u)
        turned_sign = 1.0 if turned > 0 else (-1.0 if turned < 0 else 0.0)
        lands = (  # turn_lands_on
            aligns
            & (abs(turned * dt) >= distance - LAND_EPS)
            & (turned_sign == sign)
            & (abs(turned) <= brake + LAND_EPS)
        )
        yaw_j = goal if lands else yaw[j] + turned * dt
        new_rate[j] = err / dt if lands else turned
        e_left = goal - yaw_j + np.pi
        counted = lands | (not aligns)
        yaw_left[j] = 0.0 if counted else abs(_turn(e_left) - np.pi)
        e_yaw = yaw_j + np.pi
        half[j] = (_turn(e_yaw) - np.pi) / 2
        off += (aligns & _outside(e)) | ((not counted) & _outside(e_left)) | _outside(e_yaw)
    return off


def _write_rows(
    rows: Any,
    body_rows: Any,
    picked: Any,
    q: Any,
    rate: Any,
    rate_in: Any,
    goal: Any,
    aligns: Any,
    w: Any,
    alpha: Any,
    new_rate: Any,
    left: Any,
    libm: bool,
    sin: Any,
    cos: Any,
    q_bits: Any,
    new_rate_bits: Any,
    goal_bits: Any,
    alpha_bits: Any,
    held: Any,
    held_q: Any,
    held_scalars: Any,
    held_w: Any,
    held_align: Any,
    held_left: Any,
    yaw_left: Any,
) -> None:
    """The picked rows' new quaternions (`quat.from_yaw`: the sines `sin`, `cos` of half the
    wrapped yaw, or with `libm`, the C library's of `sin` itself, which holds the half
    angles), yaw rates and yaw left, and what each turn was given when it left its row as it
    was (the same quaternion, bit for bit, and the same yaw rate)."""

    def _same(x: float, y: float) -> bool:  # the same bits (NaN never: it is turned again)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)

    for j in range(picked.shape[0]):
        k = picked[j]
        r, b = rows[k], body_rows[k]
        rate[r], yaw_left[k] = new_rate[j], left[j]
        s, c = (math.sin(sin[j]), math.cos(sin[j])) if libm else (sin[j], cos[j])
        held[r] = (
            _same(q[b, 0], 0.0)
            and _same(q[b, 1], 0.0)
            and _same(q[b, 2], s)
            and _same(q[b, 3], c)
            and _same(rate_in[j], new_rate[j])
        )  # the turn left the row as it was
        q[b, 0], q[b, 1], q[b, 2], q[b, 3] = 0.0, 0.0, s, c
        if not held[r]:
            continue  # (what it was given is read only for a held row)
        held_q[r, 0], held_q[r, 1] = q_bits[b, 0], q_bits[b, 1]
        held_q[r, 2], held_q[r, 3] = q_bits[b, 2], q_bits[b, 3]
        held_scalars[r, 0] = new_rate_bits[j]
        held_scalars[r, 1] = goal_bits[j]
        held_scalars[r, 2] = alpha_bits[j]
        held_w[r] = w[j]
        held_align[r] = aligns[j]
        held_left[r] = left[j]


@functools.cache
def sines_agree() -> bool:
    """Whether the write pass's own sines (the C library's, compiled) give NumPy's bits on
    this machine (NumPy's vectorised `sin` and `cos` are the C library's on most machines, but
    not on all: some builds for AVX-512 have their own), tried once a process."""
    return _sines_agree(np.sin, np.cos)


def _sines_agree(sin: Any, cos: Any, half: np.ndarray | None = None) -> bool:
    """Whether `_write_rows` with `libm` writes `sin` and `cos` of the half angles a turn can
    give (`half`; by default over [-pi / 2, pi / 2] and beside its ends, signed zeros, the
    smallest floats, NaN and the infinities) to the last bit."""
    write = compiled(_write_rows)
    assert write is not None
    if half is None:
        rng = np.random.default_rng(0)
        edges = np.array([0.0, -0.0, 5e-324, 1e-300, np.pi / 4, np.pi / 2, np.nan, np.inf])
        ramp = np.linspace(-np.pi / 2, np.pi / 2, 2049)
        half = np.concatenate([ramp, rng.uniform(-1.6, 1.6, 2047), edges, -edges])
    m = len(half)
    order, zeros = np.arange(m), np.zeros(m)
    q, flags = np.zeros((m, 4)), np.zeros(m, dtype=np.bool_)
    bits = np.zeros(m, dtype=np.int64)
    values = (zeros.copy(), zeros, zeros, flags, zeros, zeros, zeros, zeros)  # (rate .. left)
    given = (*values, True, half, half, q.view(np.int64), bits, bits, bits)  # (.. libm, sines)
    held_q, held_scalars = np.zeros((m, 4), dtype=np.int64), np.zeros((m, 3), dtype=np.int64)
    memo = (flags.copy(), held_q, held_scalars, zeros.copy(), flags.copy(), zeros.copy())
    write(order, order, order, q, *given, *memo, zeros.copy())
    with np.errstate(invalid="ignore"):  # (the sines of the infinities)
        expected = np.asarray(sin(half)), np.asarray(cos(half))
    return bool(
        np.array_equal(q[:, 2].view(np.int64), expected[0].view(np.int64))
        and np.array_equal(q[:, 3].view(np.int64), expected[1].view(np.int64))
    )
