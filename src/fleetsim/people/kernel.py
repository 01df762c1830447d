"""The crowd model's step (`fleetsim.people.model`) as one compiled pass (Numba, the `[fast]`
extra): the same rules, person by person, where the NumPy path takes pairs of people at once.

It gives the NumPy path's positions to within 1e-9 m a step, not to the last bit (the pushes
on a person are summed in another order), so a crowd takes one path on a machine for good:
the compiled one whenever Numba is there (at any size), NumPy without it. `step_arrays`
returns None when Numba is not there.

Cells: people are sorted into square cells as wide as the model's reach, robots into cells
as wide as their reach plus the widest robot; a person looks in the 3 x 3 cells round its own.
The walls' own cell index (`Walls`) is read as it stands.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from fleetsim import jit

SKIN_M = 1e-6  # (as `model.SKIN_M`)
DENSE_CELLS_PER_POINT = 16  # (as `grid.pairs_within`: a table of cells up to this many a point)
# params: time_gap, a, D (people), a, D (walls), a, D (robots), reach, move margin, skin,
# anticipation (s)
T, A_P, D_P, A_W, D_W, A_R, D_R, REACH, MARGIN, SKIN, AHEAD = range(11)


def _grid(x: Any, size: float) -> tuple[Any, Any, Any, int, int, int, int]:
    """Points `x` sorted into cells of `size` (a ring of empty cells round them): (order,
    sorted keys, each cell's first row or an empty table on a wide sparse spread, the cell
    origin (x, y), width, height). Cells of one row of the grid are consecutive keys."""
    n = x.shape[0]
    cx = np.empty(n, np.int64)
    cy = np.empty(n, np.int64)
    for i in range(n):
        cx[i] = math.floor(x[i, 0] / size)
        cy[i] = math.floor(x[i, 1] / size)
    ox, oy = cx.min() - 1, cy.min() - 1
    width, height = cx.max() - ox + 2, cy.max() - oy + 2
    key = (cy - oy) * width + (cx - ox)
    cells = width * height
    if cells > DENSE_CELLS_PER_POINT * n + 4096:
        order = np.argsort(key, kind="mergesort")
        return order, key[order], np.empty(0, np.int64), ox, oy, width, height
    first = np.zeros(cells + 1, np.int64)  # (a counting sort: stable, as the keys come)
    for i in range(n):
        first[key[i] + 1] += 1
    for c in range(cells):
        first[c + 1] += first[c]
    fill = first[:-1].copy()
    order = np.empty(n, np.int64)
    for i in range(n):
        order[fill[key[i]]] = i
        fill[key[i]] += 1
    return order, key[order], first, ox, oy, width, height


def _rows(keys: Any, first: Any, lo: int, hi: int) -> tuple[Any, Any]:
    """The rows [start, end) of the sorted keys in cells `lo` to `hi` (consecutive keys)."""
    if first.shape[0]:
        return first[lo], first[hi + 1]
    return np.searchsorted(keys, lo, "left"), np.searchsorted(keys, hi, "right")


def _wall_rows(
    px: float, py: float, cell: float, ox: int, oy: int, width: int, height: int,
    keys: Any, first: Any,
) -> tuple[int, int]:  # fmt: skip
    """The rows [start, end) of the wall index's entries in the cell of point (px, py)."""
    cx = math.floor(px / cell) - ox
    cy = math.floor(py / cell) - oy
    if cx < 0 or cy < 0 or cx >= width or cy >= height:
        return 0, 0
    return _rows(keys, first, cy * width + cx, cy * width + cx)


def _closest(px: float, py: float, seg: Any, k: int) -> tuple[float, float, float]:
    """Segment k's point nearest (px, py), and the squared distance."""
    ax, ay = seg[k, 0, 0], seg[k, 0, 1]
    abx, aby = seg[k, 1, 0] - ax, seg[k, 1, 1] - ay
    length2 = max(abx * abx + aby * aby, 1e-18)
    t = min(max(((px - ax) * abx + (py - ay) * aby) / length2, 0.0), 1.0)
    qx, qy = ax + t * abx, ay + t * aby
    return qx, qy, (qx - px) * (qx - px) + (qy - py) * (qy - py)


def _crosses(px: float, py: float, ex: float, ey: float, seg: Any, k: int) -> bool:
    """Whether the move (px, py) -> (ex, ey) crosses segment k (its two parameters along the
    move and the segment both in [0, 1], compared without dividing)."""
    rx, ry = ex - px, ey - py
    qx, qy = seg[k, 0, 0] - px, seg[k, 0, 1] - py
    sx, sy = seg[k, 1, 0] - seg[k, 0, 0], seg[k, 1, 1] - seg[k, 0, 1]
    denom = rx * sy - ry * sx
    if abs(denom) <= 1e-15:
        return False
    t = qx * sy - qy * sx
    u = qx * ry - qy * rx
    if denom < 0:
        denom, t, u = -denom, -t, -u
    return bool(0.0 <= t <= denom and 0.0 <= u <= denom)


def _off_walls(
    out: Any, x: Any, radius: Any, who: Any, seg: Any, wall: Any, wids: Any, wkeys: Any,
    wfirst: Any, wk: Any, wq: Any, wstart: Any,
) -> None:  # fmt: skip
    """Anyone of `who` nearer a wall than its radius pushed out along the wall's normal, in
    place (twice: a corner's two sides; the second time, only those the first moved: no one
    else is nearer now). The pieces near each one's step start `x` (`wk`, their distances
    from it `wq[:, 2]`, from `wstart`) are all that can be that near, unless it has moved
    farther than the walls' reach less its radius: then its cell is looked in. A piece
    farther from `x` than the radius and the way moved since cannot be that near."""
    cell, ox, oy, width, height, reach = wall[0], int(wall[1]), int(wall[2]), int(wall[3]), \
        int(wall[4]), wall[5]  # fmt: skip
    for _ in range(2):
        moved = np.zeros(who.shape[0], np.bool_)
        shift = np.zeros((who.shape[0], 2))
        for w in range(who.shape[0]):
            i = who[w]
            px, py = out[i, 0], out[i, 1]
            away = math.hypot(px - x[i, 0], py - x[i, 1])
            stored = away + radius[i] <= reach
            if stored:
                lo, hi, pieces = wstart[i], wstart[i + 1], wk
            else:
                lo, hi = _wall_rows(px, py, cell, ox, oy, width, height, wkeys, wfirst)
                pieces = wids
            for e in range(lo, hi):
                if stored and wq[e, 2] - away >= radius[i]:
                    continue
                qx, qy, d2 = _closest(px, py, seg, pieces[e])
                if d2 <= reach * reach and d2 < radius[i] * radius[i]:
                    moved[w] = True
                    d = max(math.sqrt(d2), 1e-9)
                    depth = radius[i] - d + SKIN_M
                    shift[w, 0] += (px - qx) / d * depth
                    shift[w, 1] += (py - qy) / d * depth
        if not moved.any():
            return
        for w in range(who.shape[0]):
            out[who[w], 0] += shift[w, 0]
            out[who[w], 1] += shift[w, 1]
        who = who[moved]


def blocked(start: Any, end: Any, seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any) -> Any:
    """(P,) bool: whether a wall piece within the walls' reach of each `start` cuts the
    first reach metres of the line toward its `end` (`Walls.blocked`)."""
    cell, ox, oy, width, height, reach = wall[0], int(wall[1]), int(wall[2]), int(wall[3]), \
        int(wall[4]), wall[5]  # fmt: skip
    out = np.zeros(start.shape[0], np.bool_)
    for i in range(start.shape[0]):
        px, py = start[i, 0], start[i, 1]
        dx, dy = end[i, 0] - px, end[i, 1] - py
        scale = min(1.0, reach / max(math.hypot(dx, dy), 1e-12))
        ex, ey = px + dx * scale, py + dy * scale
        lo, hi = _wall_rows(px, py, cell, ox, oy, width, height, wkeys, wfirst)
        for r in range(lo, hi):
            k = wids[r]
            if _crosses(px, py, ex, ey, seg, k):  # (crossing a line no longer than the
                out[i] = True  # reach: within the reach)
                break
    return out


def _near_people(x: Any, reach: float, pj: Any, ps: Any, start: Any) -> bool:
    """Every pair of people within `reach` of each other, once: person i's partners `pj` and
    distances `ps` from start[i] to start[i + 1] (each pair under the one first in cell order:
    of the 3 x 3 cells round a person, only those after it in that order are looked in);
    False when they do not fit in `pj` (call again, larger)."""
    n = x.shape[0]
    order, keys, first, ox, oy, width, _ = _grid(x, reach)
    rank = np.empty(n, np.int64)
    for r in range(n):
        rank[order[r]] = r
    at = 0
    for i in range(n):
        px, py = x[i, 0], x[i, 1]
        cx = math.floor(px / reach) - ox
        cy = math.floor(py / reach) - oy
        for gy in range(cy, cy + 2):
            lo, hi = _rows(keys, first, gy * width + cx - 1, gy * width + cx + 1)
            if gy == cy:
                lo = rank[i] + 1
            if at + hi - lo > pj.shape[0]:
                return False
            for r in range(lo, hi):
                j = order[r]
                dx, dy = px - x[j, 0], py - x[j, 1]
                if dx * dx + dy * dy <= reach * reach:
                    pj[at], ps[at] = j, max(math.sqrt(dx * dx + dy * dy), 1e-9)
                    at += 1
        start[i + 1] = at
    return True


def _near_walls(
    x: Any, seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any, wk: Any, wq: Any, start: Any,
) -> bool:  # fmt: skip
    """Each person's wall pieces within the walls' reach: segment rows `wk`, their nearest
    points and distances `wq` (x, y, d); False when they do not fit."""
    cell, ox, oy, width, height, reach = wall[0], int(wall[1]), int(wall[2]), int(wall[3]), \
        int(wall[4]), wall[5]  # fmt: skip
    at = 0
    for i in range(x.shape[0]):
        px, py = x[i, 0], x[i, 1]
        lo, hi = _wall_rows(px, py, cell, ox, oy, width, height, wkeys, wfirst)
        if at + hi - lo > wk.shape[0]:
            return False
        for r in range(lo, hi):
            qx, qy, d2 = _closest(px, py, seg, wids[r])
            if d2 <= reach * reach:
                wk[at], wq[at, 0], wq[at, 1], wq[at, 2] = wids[r], qx, qy, max(math.sqrt(d2), 1e-9)
                at += 1
        start[i + 1] = at
    return True


def _near_robots(x: Any, rc: Any, rr: Any, reach: float, rk: Any, start: Any) -> bool:
    """Each person's robots whose disc's edge is within `reach`: rows `rk`; False when they
    do not fit."""
    widest = 0.0
    for k in range(rc.shape[0]):
        widest = max(widest, rr[k])
    size = reach + widest
    order, keys, first, ox, oy, width, height = _grid(rc, size)
    at = 0
    for i in range(x.shape[0]):
        px, py = x[i, 0], x[i, 1]
        cx = math.floor(px / size) - ox
        cy = math.floor(py / size) - oy
        gx0, gx1 = max(cx - 1, 0), min(cx + 1, width - 1)
        for gy in range(max(cy - 1, 0), min(cy + 2, height)):
            if gx0 > gx1:
                break
            lo, hi = _rows(keys, first, gy * width + gx0, gy * width + gx1)
            if at + hi - lo > rk.shape[0]:
                return False
            for r in range(lo, hi):
                k = order[r]
                if math.hypot(px - rc[k, 0], py - rc[k, 1]) - rr[k] <= reach:
                    rk[at] = k
                    at += 1
        start[i + 1] = at
    return True


def step(
    x: Any, radius: Any, v0: Any, target: Any, dt: float, p: Any,
    seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any, rc: Any, rr: Any, rv: Any,
    work: Any,
) -> tuple[Any, Any, Any, Any, Any, Any]:  # fmt: skip
    """`_step` on the people sorted by cell (neighbours then lie near each other in memory),
    the answers given back in the callers' order (the pairs by person). `work`: buffers for
    what is near each person (pj, ps, wk, wq, rk; any length), kept by the caller from one
    step to the next (`work` as returned: grown when they did not fit)."""
    order = _grid(x, p[REACH])[0]
    new_s, left_s, owner, robot, gap, work = _step(
        x[order], radius[order], v0[order], target[order], dt, p, seg, wall, wids, wkeys,
        wfirst, rc, rr, rv, work,
    )  # fmt: skip
    return _unsort(order, new_s, left_s, owner, robot, gap) + (work,)  # noqa: RUF005 (Numba)


def _unsort(
    order: Any, new_s: Any, left_s: Any, owner: Any, robot: Any, gap: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """The answers of people sorted by `order` given back in the callers' order (the pairs
    by person)."""
    new, remaining = np.empty_like(new_s), np.empty_like(left_s)
    for r in range(order.shape[0]):
        new[order[r], 0], new[order[r], 1] = new_s[r, 0], new_s[r, 1]
        remaining[order[r]] = left_s[r]
    person = order[owner]
    by = np.argsort(person, kind="mergesort")
    return new, remaining, person[by], robot[by], gap[by]


def _near_others(
    x: Any, p: Any, seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any, rc: Any, rr: Any,
    wk: Any, wq: Any, wstart: Any, rk: Any, rstart: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """The walls and robots near each person (`_near_walls`, `_near_robots`), in buffers
    grown until they fit: (wk, wq, rk)."""
    n = x.shape[0]
    while seg.shape[0] and not _near_walls(x, seg, wall, wids, wkeys, wfirst, wk, wq, wstart):
        wk, wq = np.empty(2 * wk.shape[0] + 4 * n, np.int64), np.empty((2 * wk.shape[0] + 4 * n, 3))
    while rc.shape[0] and not _near_robots(x, rc, rr, p[REACH] + p[MARGIN], rk, rstart):
        rk = np.empty(2 * rk.shape[0] + n, np.int64)
    return wk, wq, rk


def _near_all(x: Any, reach: float, pj: Any, ps: Any, pstart: Any) -> tuple[Any, Any]:
    """The people near each person (`_near_people`), in buffers grown until they fit."""
    n = x.shape[0]
    while not _near_people(x, reach, pj, ps, pstart):
        pj, ps = np.empty(2 * pj.shape[0] + 16 * n, np.int64), np.empty(2 * pj.shape[0] + 16 * n)
    return pj, ps


def _step(
    x: Any, radius: Any, v0: Any, target: Any, dt: float, p: Any,
    seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any, rc: Any, rr: Any, rv: Any,
    work: Any,
) -> tuple[Any, Any, Any, Any, Any, Any]:  # fmt: skip
    """One step of every person (see `fleetsim.people.model.step_people`): positions (n, 2),
    radii, free speeds, waypoints (n, 2), dt, the model's numbers `p`; the walls' segments,
    `wall` (cell, origin x, origin y, width, height, reach), entry ids, keys and first-row
    table (no segments: no walls); robot centres (m, 2), radii and velocities. Returns new
    positions, the distance left to each waypoint, the (person, robot, gap) rows near
    robots, and the buffers. (`step_in_two` does the same in two threads.)"""
    n = x.shape[0]
    # what is near each person, found once: people (row, distance), walls (segment, nearest
    # point, distance), robots (row); person i's entries from start[i] to start[i + 1]
    pstart, wstart, rstart = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64), \
        np.zeros(n + 1, np.int64)  # fmt: skip
    pj, ps, wk, wq, rk = work
    pj, ps = _near_all(x, p[REACH], pj, ps, pstart)
    wk, wq, rk = _near_others(x, p, seg, wall, wids, wkeys, wfirst, rc, rr, wk, wq, wstart, rk,
                              rstart)  # fmt: skip
    push = _pushes(x, radius, p, pj, ps, pstart)
    e = _ways(_bearings(x, radius, target, p, wq, wstart, rc, rr, rv, rk, rstart), push)
    new, remaining, owner, robot, gap = _finish(
        x, radius, v0, target, dt, p, e, seg, wall, wids, wkeys, wfirst, rc, rr, pj, ps, pstart,
        wk, wq, wstart, rk, rstart,
    )  # fmt: skip
    return new, remaining, owner, robot, gap, (pj, ps, wk, wq, rk)


def _finish(
    x: Any, radius: Any, v0: Any, target: Any, dt: float, p: Any, e: Any, seg: Any, wall: Any,
    wids: Any, wkeys: Any, wfirst: Any, rc: Any, rr: Any, pj: Any, ps: Any, pstart: Any,
    wk: Any, wq: Any, wstart: Any, rk: Any, rstart: Any,
) -> tuple[Any, Any, Any, Any, Any]:  # fmt: skip
    """The step from the ways people walk: their speeds and moves, out of walls and robots,
    and the (person, robot, gap) rows near robots after it."""
    n, m = x.shape[0], rc.shape[0]
    reach = p[REACH]
    gaps = _gaps(x, radius, e, pj, ps, pstart)
    new = _moves(x, radius, v0, target, dt, p, e, gaps, seg, wk, wq, wstart, rc, rr, rk, rstart)
    by_walls = np.flatnonzero(wstart[1:] > wstart[:-1])
    if seg.shape[0]:
        _off_walls(new, x, radius, by_walls, seg, wall, wids, wkeys, wfirst, wk, wq, wstart)
    if m:  # -- robots push people out of their discs (not through a wall)
        pushed = _off_robots(new, radius, p[SKIN], seg, wall, wids, wkeys, wfirst, rc, rr, rk,
                             rstart)  # fmt: skip
        if seg.shape[0] and pushed:
            _off_walls(new, x, radius, by_walls, seg, wall, wids, wkeys, wfirst, wk, wq, wstart)
    total = rstart[n]
    keep = np.zeros(total, np.bool_)
    owner = np.empty(total, np.int64)
    rgap = np.empty(total)
    for i in range(n):
        for at in range(rstart[i], rstart[i + 1]):
            k = rk[at]
            owner[at] = i
            rgap[at] = math.hypot(new[i, 0] - rc[k, 0], new[i, 1] - rc[k, 1]) - radius[i] - rr[k]
            keep[at] = rgap[at] + radius[i] <= reach
    remaining = np.empty(n)
    for i in range(n):
        remaining[i] = math.hypot(target[i, 0] - new[i, 0], target[i, 1] - new[i, 1])
    return new, remaining, owner[keep], rk[:total][keep], rgap[keep]


def _pushes(x: Any, radius: Any, p: Any, pj: Any, ps: Any, pstart: Any) -> Any:
    """(n, 2) the push of the people near each one (each pair pushes both apart)."""
    n = x.shape[0]
    a_p, to_p = p[A_P], 1.0 / p[D_P]
    push = np.zeros((n, 2))
    for i in range(n):
        for at in range(pstart[i], pstart[i + 1]):
            j, s = pj[at], ps[at]
            f = a_p * math.exp((radius[i] + radius[j] - s) * to_p) / s
            fx, fy = f * (x[i, 0] - x[j, 0]), f * (x[i, 1] - x[j, 1])
            push[i, 0] += fx
            push[i, 1] += fy
            push[j, 0] -= fx
            push[j, 1] -= fy
    return push


def _bearings(
    x: Any, radius: Any, target: Any, p: Any, wq: Any, wstart: Any, rc: Any, rr: Any, rv: Any,
    rk: Any, rstart: Any,
) -> Any:  # fmt: skip
    """(n, 2) each one's way before the people near it: toward its waypoint, pushed by the
    walls and robots near it (a robot from where it will come closest, `p[AHEAD]` s ahead at
    most)."""
    n = x.shape[0]
    a_w, a_r = p[A_W], p[A_R]
    to_w, to_r = 1.0 / p[D_W], 1.0 / p[D_R]
    way = np.zeros((n, 2))
    for i in range(n):
        px, py = x[i, 0], x[i, 1]
        tx, ty = target[i, 0] - px, target[i, 1] - py
        dist = math.hypot(tx, ty)
        wx, wy = (tx / dist, ty / dist) if dist > 1e-12 else (0.0, 0.0)
        for at in range(wstart[i], wstart[i + 1]):
            d = wq[at, 2]
            power = (radius[i] - d) * to_w
            if power < -40.0:  # (a push below 1e-16: nothing)
                continue
            f = a_w * math.exp(power) / d
            wx += f * (px - wq[at, 0])
            wy += f * (py - wq[at, 1])
        for at in range(rstart[i], rstart[i + 1]):
            k = rk[at]
            dx, dy = px - rc[k, 0], py - rc[k, 1]
            vx, vy = rv[k, 0], rv[k, 1]
            vv = vx * vx + vy * vy
            if p[AHEAD] > 0 and vv > 1e-12:  # (where it will come closest)
                t = min(max((dx * vx + dy * vy) / vv, 0.0), p[AHEAD])
                dx, dy = dx - vx * t, dy - vy * t
            s = max(math.sqrt(dx * dx + dy * dy), 1e-9)
            f = a_r * math.exp((radius[i] + rr[k] - s) * to_r) / s
            wx += f * dx
            wy += f * dy
        way[i, 0], way[i, 1] = wx, wy
    return way


def _ways(bearing: Any, push: Any) -> Any:
    """(n, 2) the way each one walks: its bearing and the people's push, normalised."""
    e = np.zeros(bearing.shape)
    for i in range(bearing.shape[0]):
        wx, wy = bearing[i, 0] + push[i, 0], bearing[i, 1] + push[i, 1]
        norm = math.hypot(wx, wy)
        e[i, 0], e[i, 1] = (wx / norm, wy / norm) if norm > 1e-12 else (0.0, 0.0)
    return e


def _gaps(x: Any, radius: Any, e: Any, pj: Any, ps: Any, pstart: Any) -> Any:
    """(n,) each one's free distance to the nearest person ahead (in front of it, within the
    width of both bodies); each pair looked at both ways."""
    n = x.shape[0]
    gaps = np.full(n, math.inf)
    for i in range(n):
        for at in range(pstart[i], pstart[i + 1]):
            j, s = pj[at], ps[at]
            dx, dy = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1]
            contact = radius[i] + radius[j]
            ahead = (e[i, 0] * dx + e[i, 1] * dy > 0) & (
                abs(e[i, 0] * dy - e[i, 1] * dx) <= contact
            )
            behind = (e[j, 0] * dx + e[j, 1] * dy < 0) & (
                abs(e[j, 0] * dy - e[j, 1] * dx) <= contact
            )
            gaps[i] = min(gaps[i], s - contact if ahead else math.inf)
            gaps[j] = min(gaps[j], s - contact if behind else math.inf)
    return gaps


def _moves(
    x: Any, radius: Any, v0: Any, target: Any, dt: float, p: Any, e: Any, gaps: Any,
    seg: Any, wk: Any, wq: Any, wstart: Any, rc: Any, rr: Any, rk: Any, rstart: Any,
) -> Any:  # fmt: skip
    """(n, 2) where each one steps to: at the speed that keeps the time gap to what is ahead
    (people, walls, robots), no faster than its free speed, not past its waypoint; a move
    that would cross a wall is not made."""
    new = x.copy()
    for i in range(x.shape[0]):
        px, py, ex, ey = x[i, 0], x[i, 1], e[i, 0], e[i, 1]
        gap = gaps[i]
        for at in range(wstart[i], wstart[i + 1]):
            dx, dy = wq[at, 0] - px, wq[at, 1] - py
            if ex * dx + ey * dy > 0 and abs(ex * dy - ey * dx) <= radius[i]:
                gap = min(gap, wq[at, 2] - radius[i])
        for at in range(rstart[i], rstart[i + 1]):
            k = rk[at]
            dx, dy = rc[k, 0] - px, rc[k, 1] - py
            wide = radius[i] + rr[k]
            if ex * dx + ey * dy > 0 and abs(ex * dy - ey * dx) <= wide:
                gap = min(gap, max(math.hypot(dx, dy), 1e-9) - wide)
        speed = min(v0[i], max(0.0, gap / p[T]))
        tx, ty = target[i, 0] - px, target[i, 1] - py
        speed = min(speed, math.hypot(tx, ty) / dt)
        nx, ny = px + speed * dt * ex, py + speed * dt * ey
        crossed = False
        move = speed * dt
        for at in range(wstart[i], wstart[i + 1]):  # (a piece farther than the move: not)
            if wq[at, 2] <= move + 1e-9 and _crosses(px, py, nx, ny, seg, wk[at]):
                crossed = True
                break
        if not crossed:
            new[i, 0], new[i, 1] = nx, ny
    return new


def _off_robots(
    new: Any, radius: Any, skin: float, seg: Any, wall: Any, wids: Any, wkeys: Any,
    wfirst: Any, rc: Any, rr: Any, rk: Any, rstart: Any,
) -> bool:  # fmt: skip
    """Anyone overlapping a robot's disc pushed out of it along the line from its centre, in
    place; not through a wall (then it stays: a contact). Whether anyone was pushed."""
    cell, ox, oy, width, height, reach = wall[0], int(wall[1]), int(wall[2]), int(wall[3]), \
        int(wall[4]), wall[5]  # fmt: skip
    pushed = False
    for i in range(new.shape[0]):
        sx = sy = 0.0
        for at in range(rstart[i], rstart[i + 1]):
            k = rk[at]
            dx, dy = new[i, 0] - rc[k, 0], new[i, 1] - rc[k, 1]
            s = math.hypot(dx, dy)
            depth = radius[i] + rr[k] - s
            if depth > 0:
                s = max(s, 1e-9)
                sx += dx / s * (depth + skin)
                sy += dy / s * (depth + skin)
        if sx == 0.0 and sy == 0.0:
            continue
        px, py = new[i, 0], new[i, 1]
        ex, ey = px + sx, py + sy
        if seg.shape[0]:
            lo, hi = _wall_rows(px, py, cell, ox, oy, width, height, wkeys, wfirst)
            for r in range(lo, hi):
                k = wids[r]
                if _closest(px, py, seg, k)[2] <= reach * reach and _crosses(
                    px, py, ex, ey, seg, k
                ):
                    ex, ey = px, py
                    break
        new[i, 0], new[i, 1] = ex, ey
        pushed = True
    return pushed


HELPERS = (
    "_grid", "_rows", "_near_people", "_near_walls", "_near_robots", "_wall_rows", "_closest",
    "_crosses", "_off_walls", "_pushes", "_bearings", "_ways", "_gaps", "_moves",
    "_off_robots", "_finish", "_unsort", "_near_others", "_near_all", "_step",
)  # fmt: skip


@functools.cache
def _compiled() -> Any:
    """`step` compiled with its helpers (each compiled, put in their place), or None."""
    return jit.compiled_together(globals(), HELPERS, step)


@functools.cache
def _compiled_blocked() -> Any:
    return jit.compiled(blocked) if _compiled() is not None else None


def blocked_arrays(*args: Any) -> Any:
    """`blocked` compiled, or None without Numba."""
    kernel = _compiled_blocked()
    return None if kernel is None else kernel(*args)


def buffers() -> tuple[Any, ...]:
    """Empty buffers for `step` (it grows them to fit)."""
    ints, floats = np.empty(0, np.int64), np.empty(0)
    return ints, floats, ints, np.empty((0, 3)), ints


def available() -> bool:
    """Whether the compiled step is there (Numba installed and allowed)."""
    return _compiled() is not None


def step_arrays(*args: Any) -> tuple[Any, ...] | None:
    """`step` compiled, or None without Numba (the caller then uses the NumPy path)."""
    kernel = _compiled()
    if kernel is None:
        return None
    return kernel(*args)  # type: ignore[no-any-return]
