"""Compiled turning of omnidirectional robots towards their goal's yaw (Numba; `fleetsim.jit`).

`drive` is `fleetsim.control.omni.step_omni` for the rows `MotionSystem` drives compiled, in
place on the simulation's tables: the drive's pass (`kernels.omni_drive`) also picks the
rows that turn and lays out what their turn reads side by side, while the rows are at hand
(the rows of a large fleet are in memory further off than the cache, and one pass over them
costs less than two); then, with NumPy's arctangent between (Numba's differs from NumPy's
vectorised one in the last bit), the turn itself, the same formulas in the same order as
`omni.turn`, runs over those arrays without branches, so the compiler makes vector
instructions of it (eight rows at a time with AVX-512; `_turn_packed`); and the quaternions
and yaw rates are written back (`_write_rows`), with the C library's sines, which are
NumPy's on most machines and are taken where a trial at first use finds them so
(`sines_agree`; NumPy's between the passes elsewhere). So a run gives the NumPy path's
numbers to the last bit. A large fleet's rows run in two halves on two threads
(`fleetsim.parallel`), each half through all the passes and NumPy's functions (which let go
of the GIL) on its own: one hand-over a step.

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

from fleetsim.control import kernels, omni
from fleetsim.control.trapezoid import LAND_EPS
from fleetsim.jit import compiled

TWO_PI = 2 * np.pi
PACKED = 9  # the turning rows' values side by side (the drive pass lays out 6, the turn 3)


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
        self._picked, self._packed = np.empty(0, np.int64), np.empty((PACKED, 0))
        self._aligns = np.empty(0, dtype=np.bool_)

    def scratch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Room for a step's `n` rows to turn: their places, what their turn reads and gives
        side by side (`PACKED` rows) and whether they align (kept from step to step)."""
        if self._packed.shape[1] < n:
            size = max(n, 2 * self._packed.shape[1])
            self._picked, self._packed = np.empty(size, np.int64), np.empty((PACKED, size))
            self._aligns = np.empty(size, dtype=np.bool_)
        return self._picked[:n], self._packed[:, :n], self._aligns[:n]

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


def drive(
    rows: np.ndarray,
    body_rows: np.ndarray,
    a: Any,
    b: Any,
    dt: float,
    memory: TurnMemory,
    passing: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One step of the agent rows `rows` (their bodies at `body_rows`) driving straight to
    their goals (`kernels.omni_drive`, `passing` its own) and turning, those that align with
    their goal's yaw or still have a yaw rate, in place on the agent table's columns `a`
    (vel, yaw_rate; goal, goal_yaw, align, max_v, speed_scale, leg_v, max_a, max_w,
    max_alpha read) and the body table's `b` (pos, quat). Returns (distance left, yaw left),
    the latter as `turn` (0 for rows not turning). Needs Numba and float64 C-contiguous
    columns."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    body_rows = np.ascontiguousarray(body_rows, dtype=np.int64)
    memory.fit(int(rows.max()) + 1 if len(rows) else 0, dt)
    turns = _Turns(rows, body_rows, a, b, dt, memory)
    limits = (a["max_v"], a["speed_scale"], a["leg_v"], a["max_a"])  # (read by the kernel)
    pos, vel, goal = b["pos"], a["vel"], a["goal"]
    dist_left, _ = kernels.omni_drive(rows, body_rows, pos, vel, goal, limits, dt, passing, turns)
    memory.turned = sum(turns.turned)
    return dist_left, turns.yaw_left


class _Turns:
    """The turns of one step's rows (`kernels.Turns`): the drive's pass picks the rows that
    turn and lays out what their turn reads; `finish` takes NumPy's arctangent of them, turns
    them (`_turn_packed`) and writes them back (`_write_rows`), a stretch of rows (a half) at
    a time."""

    def __init__(
        self, rows: np.ndarray, body_rows: np.ndarray, a: Any, b: Any, dt: float, memory: TurnMemory
    ) -> None:
        self.rows, self.body_rows, self.dt = rows, body_rows, float(dt)
        self.turned: list[int] = []  # (each half's rows turned)
        self.yaw_left = np.zeros(len(rows))
        self.picked, self.packed, self.aligns = memory.scratch(len(rows))
        q, rate = b["quat"], a["yaw_rate"]
        self.columns = (q, rate, a["goal_yaw"], a["align"], a["max_w"], a["max_alpha"])
        self.bits = tuple(x.view(np.int64) for x in (q, rate, a["goal_yaw"], a["max_alpha"]))
        self.held = (memory.held, memory.q, memory.scalars, memory.w, memory.align, memory.left)
        self.libm = sines_agree()

    def arguments(self, rows: slice) -> tuple[Any, ...]:
        ys, yc, was, goal, w, alpha = self.packed[:6, rows]
        laid_out = (self.picked[rows], ys, yc, was, goal, w, alpha, self.aligns[rows])
        return True, self.columns, self.bits, self.held, (*laid_out, self.yaw_left[rows])

    def finish(self, rows: slice, m: int) -> None:
        """The rest of the turn of the rows `rows` (a half: this runs in its thread), `m` of
        which the drive's pass picked."""
        if m == 0:
            return
        turn, write = compiled(_turn_packed), compiled(_write_rows)
        assert turn is not None and write is not None
        ys, yc, was, goal, w, alpha, half, new_rate, left_of = self.packed[:, rows]
        dt, aligned = self.dt, self.aligns[rows][:m]
        inputs = (was[:m], goal[:m], aligned, w[:m], alpha[:m])
        yaw = np.arctan2(ys[:m], yc[:m], out=ys[:m])  # quat.yaw_of
        outputs = (new_rate[:m], half[:m], left_of[:m])
        if turn(yaw, *inputs, dt, *outputs):  # an angle off its usual range: NumPy's turn
            wrapped, outputs[0][:], outputs[2][:] = omni.turn(yaw, *inputs, dt)
            np.divide(wrapped, 2, out=outputs[1])
        if self.libm:  # (the write pass takes the sines itself: the same bits as NumPy's here)
            sin, cos = half[:m], half[:m]
        else:  # quat.from_yaw of the wrapped yaw
            sin, cos = np.sin(half[:m]), np.cos(half[:m])
        as_bits = (x.view(np.int64) for x in (new_rate[:m], goal[:m], alpha[:m]))
        given = (*inputs, *outputs[::2], self.libm, sin, cos, self.bits[0], *as_bits)
        here = (self.rows[rows], self.body_rows[rows], self.picked[rows][:m])
        write(*here, *self.columns[:2], *given, *self.held, self.yaw_left[rows])
        self.turned.append(m)


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
