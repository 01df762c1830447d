"""The kit's action model as one compiled pass over arrays (Numba, `fleetsim[fast]`): the same
decisions, reasons and cycles as `fleetsim.lorr.action_model`, whose rules it follows step for
step (float32 geometry, neighbour bins in the same order, index-ordered resolution with the
recursion on an explicit stack). `step_arrays` returns None when Numba is not there; the
caller then uses `ActionModel.step`.

Reason codes (`fail_code`): 0 none, 1 invalid, 2 conflicts with a decided robot, 3 blocked by
a robot that moved, 4 blocked by a robot that waited, 5 a cycle (`fail_other`: its record).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fleetsim import jit

FW, CR, CCR, W = 0, 1, 2, 3
UNSEEN, VISITING, DONE = 0, 1, 2
INVALID, CONFLICT, BLOCKED_MOVED, BLOCKED_WAITED, CYCLE = 1, 2, 3, 4, 5


def _result(
    loc: int, ori: int, cnt: int, mov: bool, act: int, max_count: int, cols: int
) -> tuple[int, int, int, bool]:
    if act != FW and act != CR and act != CCR:
        return loc, ori, cnt, mov
    count = cnt + 1
    done = count >= max_count
    if act == FW:
        if done:
            step = 1 if ori == 0 else cols if ori == 1 else -1 if ori == 2 else -cols
            return loc + step, ori, 0, False
        return loc, ori, count, True
    if done:
        turn = 1 if act == CR else 3
        return loc, (ori + turn) % 4, 0, False
    return loc, ori, count, False


def _corner(
    loc: int, ori: int, cnt: int, mov: bool, max_count: int, cols: int
) -> tuple[np.float32, np.float32]:
    x = np.float32(loc % cols)
    y = np.float32(loc // cols)
    if mov and max_count > 0 and cnt > 0:
        frac = np.float32(cnt) / np.float32(max_count)
        if ori == 0:
            x = x + frac
        elif ori == 1:
            y = y + frac
        elif ori == 2:
            x = x - frac
        elif ori == 3:
            y = y - frac
    return x, y


def _interval(
    d0: np.float32, dv: np.float32, lower: np.float32, upper: np.float32, eps: np.float32
) -> tuple[bool, np.float32, np.float32]:
    if -eps < dv < eps:
        if lower + eps < d0 < upper - eps:
            return True, np.float32(0.0), np.float32(1.0)
        return False, np.float32(0.0), np.float32(0.0)
    t0 = (lower - d0) / dv
    t1 = (upper - d0) / dv
    if t0 > t1:
        t0, t1 = t1, t0
    slack = eps / np.float32(abs(dv))
    t0 = max(np.float32(0.0), t0 + slack)
    t1 = min(np.float32(1.0), t1 - slack)
    return t0 <= t1, t0, t1


def _collide(
    ax0: np.float32,
    ay0: np.float32,
    ax1: np.float32,
    ay1: np.float32,
    asz: np.float32,
    bx0: np.float32,
    by0: np.float32,
    bx1: np.float32,
    by1: np.float32,
    bsz: np.float32,
    eps: np.float32,
) -> bool:
    alx, aly = min(ax0, ax1), min(ay0, ay1)
    ahx, ahy = max(ax0, ax1) + asz, max(ay0, ay1) + asz
    blx, bly = min(bx0, bx1), min(by0, by1)
    bhx, bhy = max(bx0, bx1) + bsz, max(by0, by1) + bsz
    if not (alx < bhx and ahx > blx and aly < bhy and ahy > bly):
        return False
    d0x, d0y = ax0 - bx0, ay0 - by0
    dvx = (ax1 - ax0) - (bx1 - bx0)
    dvy = (ay1 - ay0) - (by1 - by0)
    okx, sx, ex = _interval(d0x, dvx, -asz, bsz, eps)
    if not okx:
        return False
    oky, sy, ey = _interval(d0y, dvy, -asz, bsz, eps)
    if not oky:
        return False
    return bool(max(sx, sy) <= min(ex, ey))


def _cells(
    lo_x: np.float32, lo_y: np.float32, hi_x: np.float32, hi_y: np.float32, cols: int, rows: int
) -> tuple[int, int, int, int]:
    c0, r0 = max(0, int(np.floor(lo_x))), max(0, int(np.floor(lo_y)))
    return c0, r0, min(cols - 1, int(np.ceil(hi_x)) - 1), min(rows - 1, int(np.ceil(hi_y)) - 1)


def _valid(
    loc: int,
    x0: np.float32,
    y0: np.float32,
    x1: np.float32,
    y1: np.float32,
    size: np.float32,
    blocked: np.ndarray,
    cols: int,
    rows: int,
    eps: np.float32,
) -> bool:
    if not 0 <= loc < rows * cols:
        return False
    lo_x, lo_y = min(x0, x1), min(y0, y1)
    hi_x, hi_y = max(x0, x1) + size, max(y0, y1) + size
    if lo_x < 0 or lo_y < 0 or hi_x > np.float32(cols) or hi_y > np.float32(rows):
        return False
    c0, r0, c1, r1 = _cells(lo_x, lo_y, hi_x, hi_y, cols, rows)
    one = np.float32(1.0)
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            if blocked[r * cols + c] == 1:
                wx, wy = np.float32(c), np.float32(r)
                if _collide(x0, y0, x1, y1, size, wx, wy, wx, wy, one, eps):
                    return False
    return True


def _push(
    k: int,
    robot: int,
    top: int,
    stamp: int,
    status: np.ndarray,
    f_robot: np.ndarray,
    f_pending: np.ndarray,
    f_pos: np.ndarray,
    f_end: np.ndarray,
    want_ok: np.ndarray,
    fail_code: np.ndarray,
    wx0: np.ndarray,
    wy0: np.ndarray,
    wx1: np.ndarray,
    wy1: np.ndarray,
    size: np.float32,
    cols: int,
    rows: int,
    start: np.ndarray,
    members: np.ndarray,
    seen: np.ndarray,
    buffer: np.ndarray,
) -> tuple[int, int]:
    """Frame `k` for `robot`: the robots now in the cells about its swept square (each once, in
    cell order, then robot order) put on `buffer` from `top`; an invalid request fails at once.
    Returns the buffer's new top and the stamp used."""
    status[robot] = VISITING
    f_robot[k], f_pending[k], f_pos[k] = robot, -1, top
    if want_ok[robot]:
        margin = np.float32(1.0) + size
        lo_x, lo_y = min(wx0[robot], wx1[robot]), min(wy0[robot], wy1[robot])
        hi_x, hi_y = max(wx0[robot], wx1[robot]) + size, max(wy0[robot], wy1[robot]) + size
        stamp += 1
        seen[robot] = stamp
        c0, r0, c1, r1 = _cells(
            lo_x - margin, lo_y - margin, hi_x + margin, hi_y + margin, cols, rows
        )
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                cell = r * cols + c
                for m in range(start[cell], start[cell + 1]):
                    j = members[m]
                    if seen[j] != stamp:
                        seen[j] = stamp
                        if top >= buffer.shape[0]:
                            raise ValueError("near lists overflow")
                        buffer[top] = j
                        top += 1
    else:
        if fail_code[robot] == 0:
            fail_code[robot] = INVALID
        f_pos[k] = -1  # its request fails at once
    f_end[k] = top
    return top, stamp


def resolve(
    loc: np.ndarray,
    ori: np.ndarray,
    cnt: np.ndarray,
    mov: np.ndarray,
    req: np.ndarray,
    blocked: np.ndarray,
    rows: int,
    cols: int,
    max_count: int,
    size: np.float32,
    eps: np.float32,
) -> tuple[Any, ...]:
    """One tick: (went, fail_code, fail_other, (want_loc, want_ori, want_cnt, want_mov): the
    poses the requests lead to, cycle_i, cycle_j, cycle_start, cycle_len, chain)."""
    n = loc.shape[0]
    want_loc = np.empty(n, np.int64)
    want_ori = np.empty(n, np.int64)
    want_cnt = np.empty(n, np.int64)
    want_mov = np.empty(n, np.bool_)
    wx0 = np.empty(n, np.float32)
    wy0 = np.empty(n, np.float32)
    wx1 = np.empty(n, np.float32)
    wy1 = np.empty(n, np.float32)
    sx1 = np.empty(n, np.float32)
    sy1 = np.empty(n, np.float32)
    want_ok = np.empty(n, np.bool_)
    stay_ok = np.empty(n, np.bool_)
    for i in range(n):
        a, b, c, part_way = _result(loc[i], ori[i], cnt[i], mov[i], req[i], max_count, cols)
        want_loc[i], want_ori[i], want_cnt[i], want_mov[i] = a, b, c, part_way
        x0, y0 = _corner(loc[i], ori[i], cnt[i], mov[i], max_count, cols)
        x1, y1 = _corner(a, b, c, part_way, max_count, cols)
        wx0[i], wy0[i], wx1[i], wy1[i] = x0, y0, x1, y1
        want_ok[i] = _valid(a, x0, y0, x1, y1, size, blocked, cols, rows, eps)
        sx1[i], sy1[i] = x0, y0  # (a wait leaves the square where it is)
        stay_ok[i] = _valid(loc[i], x0, y0, x0, y0, size, blocked, cols, rows, eps)
    # neighbour bins: the cells each square covers now, robots in index order in each
    cell_count = np.zeros(rows * cols + 1, np.int64)
    for i in range(n):
        c0, r0, c1, r1 = _cells(wx0[i], wy0[i], wx0[i] + size, wy0[i] + size, cols, rows)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                cell_count[r * cols + c + 1] += 1
    start = np.cumsum(cell_count)
    fill = start.copy()
    members = np.empty(start[-1], np.int64)
    for i in range(n):
        c0, r0, c1, r1 = _cells(wx0[i], wy0[i], wx0[i] + size, wy0[i] + size, cols, rows)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                cell = r * cols + c
                members[fill[cell]] = i
                fill[cell] += 1
    status = np.zeros(n, np.int8)
    decided = np.zeros(n, np.bool_)
    went = np.zeros(n, np.bool_)
    fail_code = np.zeros(n, np.int8)
    fail_other = np.full(n, -1, np.int64)
    seen = np.full(n, -1, np.int64)
    stamp = 0
    buffer = np.empty(max(64, 64 * n), np.int64)  # the near lists of the frames on the stack
    f_robot = np.empty(n, np.int64)
    f_pos = np.empty(n, np.int64)
    f_end = np.empty(n, np.int64)
    f_pending = np.empty(n, np.int64)
    cycle_i = np.empty(n, np.int64)
    cycle_j = np.empty(n, np.int64)
    cycle_start = np.empty(n, np.int64)
    cycle_len = np.empty(n, np.int64)
    chain = np.empty(max(64, 8 * n), np.int64)
    cycles = 0
    chain_used = 0
    for root in range(n):
        if decided[root]:
            continue
        top, stamp = _push(
            0,
            root,
            0,
            stamp,
            status,
            f_robot,
            f_pending,
            f_pos,
            f_end,
            want_ok,
            fail_code,
            wx0,
            wy0,
            wx1,
            wy1,
            size,
            cols,
            rows,
            start,
            members,
            seen,
            buffer,
        )
        depth = 1
        while depth > 0:
            d = depth - 1
            i = f_robot[d]
            failed = bool(f_pos[d] < 0)
            pending = f_pending[d]
            if not failed and pending >= 0:  # back from deciding `pending`
                f_pending[d] = -1
                j = pending
                if went[j]:
                    jx1, jy1 = wx1[j], wy1[j]
                else:
                    jx1, jy1 = sx1[j], sy1[j]
                if _collide(
                    wx0[i], wy0[i], wx1[i], wy1[i], size, wx0[j], wy0[j], jx1, jy1, size, eps
                ):
                    if fail_code[i] == 0:
                        fail_code[i] = BLOCKED_MOVED if went[j] else BLOCKED_WAITED
                        fail_other[i] = j
                    failed = True
            pushed = False
            while not failed and f_pos[d] < f_end[d]:
                j = buffer[f_pos[d]]
                f_pos[d] += 1
                if decided[j]:
                    if went[j]:
                        jx1, jy1 = wx1[j], wy1[j]
                    else:
                        jx1, jy1 = sx1[j], sy1[j]
                    if _collide(
                        wx0[i], wy0[i], wx1[i], wy1[i], size, wx0[j], wy0[j], jx1, jy1, size, eps
                    ):
                        if fail_code[i] == 0:
                            fail_code[i] = CONFLICT
                            fail_other[i] = j
                        failed = True
                    continue
                if not (
                    stay_ok[j]
                    and _collide(
                        wx0[i],
                        wy0[i],
                        wx1[i],
                        wy1[i],
                        size,
                        wx0[j],
                        wy0[j],
                        sx1[j],
                        sy1[j],
                        size,
                        eps,
                    )
                ):
                    continue
                if status[j] == VISITING:  # a cycle: the stack from j, then j again
                    at = 0
                    while f_robot[at] != j:
                        at += 1
                    cycle_i[cycles], cycle_j[cycles] = i, j
                    cycle_start[cycles], cycle_len[cycles] = chain_used, depth - at
                    for k in range(at, depth):
                        if chain_used < chain.shape[0]:
                            chain[chain_used] = f_robot[k]
                        chain_used += 1
                    if fail_code[i] == 0:
                        fail_code[i] = CYCLE
                        fail_other[i] = cycles
                    cycles += 1
                    failed = True
                    continue
                # decide j first (status UNSEEN): a new frame
                f_pending[d] = j
                top, stamp = _push(
                    depth,
                    j,
                    top,
                    stamp,
                    status,
                    f_robot,
                    f_pending,
                    f_pos,
                    f_end,
                    want_ok,
                    fail_code,
                    wx0,
                    wy0,
                    wx1,
                    wy1,
                    size,
                    cols,
                    rows,
                    start,
                    members,
                    seen,
                    buffer,
                )
                depth += 1
                pushed = True
                break
            if not pushed:  # the frame is done: its request stands, or it waits
                decided[i] = True
                went[i] = not failed
                status[i] = DONE
                top = f_end[d - 1] if d > 0 else 0
                depth -= 1
    used = min(chain_used, chain.shape[0])
    wanted = (want_loc, want_ori, want_cnt, want_mov)
    return (
        went,
        fail_code,
        fail_other,
        wanted,
        cycle_i[:cycles],
        cycle_j[:cycles],
        cycle_start[:cycles],
        cycle_len[:cycles],
        chain[:used],
    )


HELPERS = ("_result", "_corner", "_interval", "_cells", "_collide", "_valid", "_push")


@functools.cache
def _compiled() -> Any:
    """`resolve` compiled with its helpers (each compiled, put in their place), or None."""
    return jit.compiled_together(globals(), HELPERS, resolve)


def warm() -> bool:
    """Load the compiled kernels now (the resolution and the delays' shuffle): from Numba's
    disk cache a few tenths of a second, once a process. Whether Numba is there."""
    from fleetsim.faults.stdrandom import StdRandom

    kernel = _compiled()
    if kernel is None:
        return False
    one = np.zeros(1, np.int64)
    kernel(
        one,
        one,
        one,
        np.zeros(1, np.bool_),
        np.full(1, W, np.int64),
        np.zeros(1, np.uint8),
        1,
        1,
        1,
        np.float32(1.0),
        np.float32(1e-6),
    )
    StdRandom(0).shuffle_array(np.arange(4, dtype=np.int64))
    return True


def step_arrays(*args: Any) -> tuple[Any, ...] | None:
    """`resolve` compiled, or None without Numba (the caller then uses `ActionModel`)."""
    kernel = _compiled()
    if kernel is None:
        return None
    return kernel(*args)  # type: ignore[no-any-return]
