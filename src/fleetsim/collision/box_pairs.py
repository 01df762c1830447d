"""The exact narrow phase of box pairs: do the local boxes of body rows i[k] and j[k] touch?

Every candidate pair of single-box bodies (and mobile robots' footprints) comes here, each box
grown by half the margin. Three cases, cheapest first:

- neither box is turned: a box is then its world AABB, which the broadphase already found
  overlapping (grown alike): they touch;
- both turned about the vertical only (robots on a floor, the usual fleet): the separating-axis
  test in the plane (four axes) and the overlap of their heights, which is the 15-axis test's
  answer for such boxes (its other axes are these, or vertical cross products of length 0);
- otherwise the 15-axis test of `fleetsim.collision.obb`.

`classify_pairs` runs compiled with Numba (`fleetsim.jit`) from `MIN_ROWS` pairs, in one pass
over the pairs from the body table's columns. A body whose world box the compiled refresh
worked out last (`fleetsim.collision.kernels.refresh_boxes`; its pose unchanged since) comes
with its kind and, if level, its plane box (yaw's cosine and sine, world centre, half
extents: the body table's `level_kind` and `level_box`, by the same expressions as here), so
a pair reads two bytes and two rows instead of a dozen columns, and unturned pairs no more
than the bytes; the others' are worked out pair by pair. The NumPy path evaluates the same
formulas in the same order, so both give the same answers. A large fleet's pairs run in two
halves on two threads (`fleetsim.parallel`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fleetsim import jit, parallel
from fleetsim.collision.obb import _PARALLEL_EPS, boxes_touch
from fleetsim.geometry import quat
from fleetsim.jit import MIN_ROWS, compiled
from fleetsim.state import CollisionMode
from fleetsim.state.table import rows_of

IntArray = np.ndarray
SEPARATE, TOUCHING, ASK = 0, 1, 2  # classify_pairs' answers
PLANAR = int(CollisionMode.NORMAL_2D)  # (a plain int for the compiled code)
AHEAD = 16  # pairs ahead whose bodies' plane boxes the kernel asks for (`fleetsim.hints`)


def classify_pairs(
    i: IntArray,
    j: IntArray,
    mode: np.ndarray,
    exact: np.ndarray,
    shaped: np.ndarray,
    pos: np.ndarray,
    q: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    grow: float,
    level_kind: np.ndarray | None = None,
    level_box: np.ndarray | None = None,
) -> np.ndarray:
    """The closest-points narrow phase of candidate pairs (int8 per pair): TOUCHING (a pair
    with a NORMAL_2D body, whose broadphase overlap in the plane stands, or boxes that touch),
    SEPARATE (boxes that do not), or ASK (PyBullet's query decides: a body that is neither a
    single box, `exact`, nor a footprint box, `shaped`). Compiled, in one pass over the pairs,
    from `MIN_ROWS` pairs (`jit.enough`); else NumPy, with the same answers. `level_kind` and
    `level_box` are the body table's columns of that name (without them, every body's box is
    worked out from pos, q, lo and hi)."""
    enough = jit.enough(len(i), MIN_ROWS)  # (Numba loads)
    kernel = jit.compiled_prefetching(globals(), _pairs_rows) if enough else None
    if kernel is not None:
        out = np.empty(len(i), dtype=np.int8)
        i, j = np.ascontiguousarray(i, dtype=np.int64), np.ascontiguousarray(j, dtype=np.int64)
        if level_kind is None or level_box is None:  # (every body worked out pair by pair)
            level_kind, level_box = np.full(len(pos), -1, dtype=np.int8), np.empty((0, 8))
        floats = (np.ascontiguousarray(x, dtype=np.float64) for x in (pos, q, lo, hi))
        table = (
            np.ascontiguousarray(mode),
            np.ascontiguousarray(exact, dtype=np.bool_),
            np.ascontiguousarray(shaped, dtype=np.bool_),
            *floats,
            np.ascontiguousarray(level_kind, dtype=np.int8),
            np.ascontiguousarray(level_box, dtype=np.float64),
        )

        def part(start: int, stop: int) -> None:  # (both cores: two halves of the pairs)
            s = slice(start, stop)
            kernel(i[s], j[s], *table, float(grow), out[s])

        parallel.run([functools.partial(part, *h) for h in parallel.halves(len(i))])
        return out
    planar = (mode[i] == PLANAR) | (mode[j] == PLANAR)
    boxes = ~planar & (exact[i] | shaped[i]) & (exact[j] | shaped[j])
    verdict: np.ndarray = np.where(planar, np.int8(TOUCHING), np.int8(ASK))
    if boxes.any():
        touch = _pairs_numpy(i[boxes], j[boxes], pos, q, lo, hi, grow)
        verdict[boxes] = np.where(touch, np.int8(TOUCHING), np.int8(SEPARATE))
    return verdict


def touching_only(
    i: IntArray, j: IntArray, verdict: np.ndarray
) -> tuple[IntArray, IntArray] | None:
    """The pairs `classify_pairs` found TOUCHING, in one compiled pass, when none is ASK
    (the usual large fleet of boxes and footprints); None when one is, or for fewer than
    `MIN_ROWS` pairs, or without Numba (the caller selects them with NumPy)."""
    kernel = compiled(_touching_rows) if jit.enough(len(i), MIN_ROWS) else None
    if kernel is None:
        return None
    out_i, out_j = np.empty(len(i), dtype=np.int64), np.empty(len(j), dtype=np.int64)
    count = kernel(
        np.ascontiguousarray(i, dtype=np.int64),
        np.ascontiguousarray(j, dtype=np.int64),
        np.ascontiguousarray(verdict, dtype=np.int8),
        out_i,
        out_j,
    )
    return None if count < 0 else (out_i[:count], out_j[:count])


def _touching_rows(i: Any, j: Any, verdict: Any, out_i: Any, out_j: Any) -> int:
    """The TOUCHING pairs copied to out_i/out_j; their count, or -1 at the first ASK."""
    count = 0
    for k in range(i.shape[0]):
        if verdict[k] == ASK:
            return -1
        out_i[count], out_j[count] = i[k], j[k]
        count += verdict[k] == TOUCHING
    return count


def _pairs_numpy(
    i: IntArray,
    j: IntArray,
    pos: np.ndarray,
    q: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    grow: float,
) -> np.ndarray:
    """Whether the grown boxes of the pairs of box rows (i, j) touch (bool), with NumPy."""
    touch = np.ones(len(i), dtype=bool)
    qi, qj = rows_of(q, i), rows_of(q, j)
    level_i = (qi[:, 0] == 0) & (qi[:, 1] == 0)
    level_j = (qj[:, 0] == 0) & (qj[:, 1] == 0)
    turned = ~(level_i & (qi[:, 2] == 0) & level_j & (qj[:, 2] == 0))
    flat = turned & level_i & level_j
    if flat.any():
        touch[flat] = _flat(i[flat], j[flat], pos, qi[flat], qj[flat], lo, hi, grow)
    tilted = turned & ~flat
    if tilted.any():
        ti, tj = i[tilted], j[tilted]
        touch[tilted] = boxes_touch(
            *_box(ti, pos, q, lo, hi, grow), *_box(tj, pos, q, lo, hi, grow)
        )
    return touch


def _box(
    rows: IntArray, pos: np.ndarray, q: np.ndarray, lo: np.ndarray, hi: np.ndarray, grow: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, rotation, half extents) of the rows' grown boxes in the world."""
    rot = quat.to_matrix(rows_of(q, rows))
    low, high = rows_of(lo, rows), rows_of(hi, rows)
    centre = rows_of(pos, rows) + np.einsum("nij,nj->ni", rot, (low + high) / 2)
    return centre, rot, (high - low) / 2 + grow


def _flat(
    i: IntArray,
    j: IntArray,
    pos: np.ndarray,
    qi: np.ndarray,
    qj: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    grow: float,
) -> np.ndarray:
    """The test for pairs of boxes turned about the vertical only (the kernel's formulas)."""
    zi, wi, zj, wj = qi[:, 2], qi[:, 3], qj[:, 2], qj[:, 3]
    ca, sa = 1 - zi * (2 * zi), wi * (2 * zi)  # cos and sin of the yaw, as quat.to_matrix
    cb, sb = 1 - zj * (2 * zj), wj * (2 * zj)
    lo_a, hi_a, lo_b, hi_b = rows_of(lo, i), rows_of(hi, i), rows_of(lo, j), rows_of(hi, j)
    ma, mb = (lo_a + hi_a) / 2, (lo_b + hi_b) / 2
    ha, hb = (hi_a - lo_a) / 2 + grow, (hi_b - lo_b) / 2 + grow
    pa, pb = rows_of(pos, i), rows_of(pos, j)
    dx = (pb[:, 0] + (cb * mb[:, 0] - sb * mb[:, 1])) - (pa[:, 0] + (ca * ma[:, 0] - sa * ma[:, 1]))
    dy = (pb[:, 1] + (sb * mb[:, 0] + cb * mb[:, 1])) - (pa[:, 1] + (sa * ma[:, 0] + ca * ma[:, 1]))
    dz = (pb[:, 2] + mb[:, 2]) - (pa[:, 2] + ma[:, 2])
    tx, ty = ca * dx + sa * dy, ca * dy - sa * dx  # the offset in a's frame
    rc, rs = ca * cb + sa * sb, ca * sb - sa * cb  # b's turn relative to a's
    arc, ars = np.abs(rc) + _PARALLEL_EPS, np.abs(rs) + _PARALLEL_EPS
    ux, uy = rc * tx + rs * ty, rc * ty - rs * tx  # the offset in b's frame
    separated = np.abs(dz) > ha[:, 2] + hb[:, 2]
    separated |= np.abs(tx) > ha[:, 0] + (arc * hb[:, 0] + ars * hb[:, 1])
    separated |= np.abs(ty) > ha[:, 1] + (ars * hb[:, 0] + arc * hb[:, 1])
    separated |= np.abs(ux) > hb[:, 0] + (arc * ha[:, 0] + ars * ha[:, 1])
    separated |= np.abs(uy) > hb[:, 1] + (ars * ha[:, 0] + arc * ha[:, 1])
    result: np.ndarray = ~separated
    return result


# -- compiled (the same formulas, pair by pair; one function, as Numba compiles it alone) ---------


def prefetch(array: Any, row: int) -> None:
    """A placeholder: `jit.compiled_prefetching` puts `fleetsim.hints.prefetch` here."""


def _pairs_rows(
    i: Any,
    j: Any,
    mode: Any,
    exact: Any,
    shaped: Any,
    pos: Any,
    q: Any,
    lo: Any,
    hi: Any,
    level_kind: Any,
    level_box: Any,
    grow: float,
    out: Any,
) -> None:
    """`classify_pairs`, pair by pair (a body's kind and plane box from `level_kind` and
    `level_box` where the refresh worked them out, else from its columns)."""

    def _kind(r: int, level_kind: Any, q: Any) -> int:  # 0 unturned, 1 level, 2 tilted
        if level_kind[r] >= 0:
            return int(level_kind[r])
        if q[r, 0] == 0.0 and q[r, 1] == 0.0:
            return 0 if q[r, 2] == 0.0 else 1
        return 2

    def _plane(r: int, level_kind: Any, level_box: Any, pos: Any, q: Any, lo: Any, hi: Any) -> Any:
        """(cos, sin, centre x, y, z, half x, y, z) of a level box, as `_flat` has them."""
        if level_kind[r] >= 0:
            box = level_box[r]
            return box[0], box[1], box[2], box[3], box[4], box[5], box[6], box[7]
        z, w = q[r, 2], q[r, 3]
        c, s = 1 - z * (2 * z), w * (2 * z)
        mx, my, mz = (lo[r, 0] + hi[r, 0]) / 2, (lo[r, 1] + hi[r, 1]) / 2, (lo[r, 2] + hi[r, 2]) / 2
        return (
            c,
            s,
            pos[r, 0] + (c * mx - s * my),
            pos[r, 1] + (s * mx + c * my),
            pos[r, 2] + mz,
            (hi[r, 0] - lo[r, 0]) / 2,
            (hi[r, 1] - lo[r, 1]) / 2,
            (hi[r, 2] - lo[r, 2]) / 2,
        )

    rot, centre, half = np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    rel, abs_rel, t = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    n, ahead = i.shape[0], AHEAD if level_box.shape[0] else i.shape[0]
    for k in range(n):
        if k + ahead < n:  # the rows of a turned pair to come, read from memory meanwhile
            soon_a, soon_b = i[k + ahead], j[k + ahead]
            if (level_kind[soon_a] | level_kind[soon_b]) == 1:  # (both level, one turned)
                prefetch(level_box, soon_a)
                prefetch(level_box, soon_b)
        a, b = i[k], j[k]
        if mode[a] == PLANAR or mode[b] == PLANAR:
            out[k] = TOUCHING  # the broadphase's overlap in the plane stands
            continue
        if not ((exact[a] or shaped[a]) and (exact[b] or shaped[b])):
            out[k] = ASK
            continue
        kind_a, kind_b = _kind(a, level_kind, q), _kind(b, level_kind, q)
        if kind_a == 0 and kind_b == 0:
            out[k] = TOUCHING  # two unturned boxes: their AABBs, found overlapping
            continue
        if kind_a <= 1 and kind_b <= 1:  # turned about the vertical only: plane and heights
            ca, sa, xa, ya, za, hax, hay, haz = _plane(a, level_kind, level_box, pos, q, lo, hi)
            cb, sb, xb, yb, zb, hbx, hby, hbz = _plane(b, level_kind, level_box, pos, q, lo, hi)
            hax, hay, haz, hbx, hby, hbz = (
                hax + grow,
                hay + grow,
                haz + grow,
                hbx + grow,
                hby + grow,
                hbz + grow,
            )
            dx, dy, dz = xb - xa, yb - ya, zb - za
            tx, ty = ca * dx + sa * dy, ca * dy - sa * dx
            rc, rs = ca * cb + sa * sb, ca * sb - sa * cb
            arc, ars = abs(rc) + _PARALLEL_EPS, abs(rs) + _PARALLEL_EPS
            ux, uy = rc * tx + rs * ty, rc * ty - rs * tx
            separate = (  # (every axis, no branches: the next pairs' reads go on meanwhile)
                (abs(dz) > haz + hbz)
                | (abs(tx) > hax + (arc * hbx + ars * hby))
                | (abs(ty) > hay + (ars * hbx + arc * hby))
                | (abs(ux) > hbx + (arc * hax + ars * hay))
                | (abs(uy) > hby + (ars * hax + arc * hay))
            )
            out[k] = SEPARATE if separate else TOUCHING
            continue
        # Tilted: obb.boxes_touch of the pair, its einsums as sums over 0, 1, 2 in order.
        for s in range(2):
            r = a if s == 0 else b
            x, y, z, w = q[r, 0], q[r, 1], q[r, 2], q[r, 3]  # quat.to_matrix, term by term
            x2, y2, z2 = 2 * x, 2 * y, 2 * z
            xx, yy, zz = x * x2, y * y2, z * z2
            xy, xz, yz = x * y2, x * z2, y * z2
            wx, wy, wz = w * x2, w * y2, w * z2
            rot[s, 0, 0], rot[s, 0, 1], rot[s, 0, 2] = 1 - yy - zz, xy - wz, xz + wy
            rot[s, 1, 0], rot[s, 1, 1], rot[s, 1, 2] = xy + wz, 1 - xx - zz, yz - wx
            rot[s, 2, 0], rot[s, 2, 1], rot[s, 2, 2] = xz - wy, yz + wx, 1 - xx - yy
            m0, m1 = (lo[r, 0] + hi[r, 0]) / 2, (lo[r, 1] + hi[r, 1]) / 2
            m2 = (lo[r, 2] + hi[r, 2]) / 2
            for n in range(3):
                centre[s, n] = pos[r, n] + (
                    rot[s, n, 0] * m0 + rot[s, n, 1] * m1 + rot[s, n, 2] * m2
                )
                half[s, n] = (hi[r, n] - lo[r, n]) / 2 + grow
        for n in range(3):
            for m in range(3):
                rel[n, m] = (
                    rot[0, 0, n] * rot[1, 0, m]
                    + rot[0, 1, n] * rot[1, 1, m]
                    + rot[0, 2, n] * rot[1, 2, m]
                )
                abs_rel[n, m] = abs(rel[n, m]) + _PARALLEL_EPS
        d0, d1, d2 = (
            centre[1, 0] - centre[0, 0],
            centre[1, 1] - centre[0, 1],
            centre[1, 2] - centre[0, 2],
        )
        for n in range(3):
            t[n] = rot[0, 0, n] * d0 + rot[0, 1, n] * d1 + rot[0, 2, n] * d2
        touching = True
        for n in range(3):
            reach = (
                abs_rel[n, 0] * half[1, 0] + abs_rel[n, 1] * half[1, 1] + abs_rel[n, 2] * half[1, 2]
            )
            if abs(t[n]) > half[0, n] + reach:
                touching = False
            t_b = rel[0, n] * t[0] + rel[1, n] * t[1] + rel[2, n] * t[2]
            reach = (
                abs_rel[0, n] * half[0, 0] + abs_rel[1, n] * half[0, 1] + abs_rel[2, n] * half[0, 2]
            )
            if abs(t_b) > half[1, n] + reach:
                touching = False
        for n in range(3):
            n1, n2 = (n + 1) % 3, (n + 2) % 3
            for m in range(3):
                m1, m2 = (m + 1) % 3, (m + 2) % 3
                reach_a = half[0, n1] * abs_rel[n2, m] + half[0, n2] * abs_rel[n1, m]
                reach_b = half[1, m1] * abs_rel[n, m2] + half[1, m2] * abs_rel[n, m1]
                if abs(t[n2] * rel[n1, m] - t[n1] * rel[n2, m]) > reach_a + reach_b:
                    touching = False
        out[k] = TOUCHING if touching else SEPARATE
