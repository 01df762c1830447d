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
over the pairs from the body table's columns (in a crowd, with at least a pair for every four
bodies, each level box's yaw, world centre and half extents are worked out once, into one row
a body, by the same expressions: a pair then reads two rows instead of a dozen columns); the
NumPy path evaluates the same formulas in the same order, so both give the same answers. A
large fleet's pairs run in two halves on two threads (`fleetsim.parallel`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fleetsim import jit, parallel
from fleetsim.collision import kernels
from fleetsim.collision.obb import _PARALLEL_EPS, boxes_touch
from fleetsim.geometry import quat
from fleetsim.jit import MIN_ROWS, compiled
from fleetsim.state import CollisionMode
from fleetsim.state.table import rows_of

IntArray = np.ndarray
SEPARATE, TOUCHING, ASK = 0, 1, 2  # classify_pairs' answers
PLANAR = int(CollisionMode.NORMAL_2D)  # (a plain int for the compiled code)
# Each body's box is worked out once (packed) when pairs x this >= bodies: at 100,000 robots
# with 29,000 pairs of turned boxes that takes a sixth off the narrow phase
PACK_SHARE = 4


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
) -> np.ndarray:
    """The closest-points narrow phase of candidate pairs (int8 per pair): TOUCHING (a pair
    with a NORMAL_2D body, whose broadphase overlap in the plane stands, or boxes that touch),
    SEPARATE (boxes that do not), or ASK (PyBullet's query decides: a body that is neither a
    single box, `exact`, nor a footprint box, `shaped`). Compiled, in one pass over the pairs,
    from `MIN_ROWS` pairs (`jit.enough`); else NumPy, with the same answers."""
    kernel = compiled(_pairs_rows) if jit.enough(len(i), MIN_ROWS) else None  # (Numba loads)
    if kernel is not None:
        out = np.empty(len(i), dtype=np.int8)
        i, j = np.ascontiguousarray(i, dtype=np.int64), np.ascontiguousarray(j, dtype=np.int64)
        floats = (np.ascontiguousarray(x, dtype=np.float64) for x in (pos, q, lo, hi))
        table = (
            np.ascontiguousarray(mode),
            np.ascontiguousarray(exact, dtype=np.bool_),
            np.ascontiguousarray(shaped, dtype=np.bool_),
            *floats,
        )

        packed = np.empty((0, 8))
        # a crowd: each body's box in the world once, in one row
        if PACK_SHARE * len(i) >= len(pos):
            packed = kernels.scratch("packed", len(pos), np.float64, 8)  # (no page faults)
            pack = compiled(_pack_rows)
            assert pack is not None
            parallel.run(
                [
                    functools.partial(pack, a, b, *table[3:], float(grow), packed)
                    for a, b in parallel.halves(len(pos))
                ]
            )

        def part(start: int, stop: int) -> None:  # (both cores: two halves of the pairs)
            s = slice(start, stop)
            kernel(i[s], j[s], *table, float(grow), packed, out[s])

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


def _pack_rows(
    first: int, stop: int, pos: Any, q: Any, lo: Any, hi: Any, grow: float, packed: Any
) -> None:
    """For the bodies first..stop-1 turned about the vertical only (or not at all): the cosine
    and sine of the yaw, the world centre and the grown half extents of the box, as
    `_pairs_rows` works them out for a pair (the same expressions), in one row each."""
    for r in range(first, stop):
        if q[r, 0] == 0.0 and q[r, 1] == 0.0:
            z, w = q[r, 2], q[r, 3]
            c, s = 1 - z * (2 * z), w * (2 * z)
            mx, my, mz = (
                (lo[r, 0] + hi[r, 0]) / 2,
                (lo[r, 1] + hi[r, 1]) / 2,
                (lo[r, 2] + hi[r, 2]) / 2,
            )
            packed[r, 0], packed[r, 1] = c, s
            packed[r, 2] = pos[r, 0] + (c * mx - s * my)
            packed[r, 3] = pos[r, 1] + (s * mx + c * my)
            packed[r, 4] = pos[r, 2] + mz
            packed[r, 5] = (hi[r, 0] - lo[r, 0]) / 2 + grow
            packed[r, 6] = (hi[r, 1] - lo[r, 1]) / 2 + grow
            packed[r, 7] = (hi[r, 2] - lo[r, 2]) / 2 + grow


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
    grow: float,
    packed: Any,
    out: Any,
) -> None:
    """`classify_pairs`, pair by pair (boxes turned about the vertical only read from
    `packed`, `_pack_rows`'s rows, when it has a row a body)."""
    rot, centre, half = np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3))
    rel, abs_rel, t = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for k in range(i.shape[0]):
        a, b = i[k], j[k]
        if mode[a] == PLANAR or mode[b] == PLANAR:
            out[k] = TOUCHING  # the broadphase's overlap in the plane stands
            continue
        if not ((exact[a] or shaped[a]) and (exact[b] or shaped[b])):
            out[k] = ASK
            continue
        level_a = q[a, 0] == 0.0 and q[a, 1] == 0.0
        level_b = q[b, 0] == 0.0 and q[b, 1] == 0.0
        if level_a and level_b and q[a, 2] == 0.0 and q[b, 2] == 0.0:
            out[k] = TOUCHING  # two unturned boxes: their AABBs, found overlapping
            continue
        if level_a and level_b:  # turned about the vertical only: the plane and the heights
            if packed.shape[0]:
                ca, sa, hax, hay, haz = (
                    packed[a, 0],
                    packed[a, 1],
                    packed[a, 5],
                    packed[a, 6],
                    packed[a, 7],
                )
                cb, sb, hbx, hby, hbz = (
                    packed[b, 0],
                    packed[b, 1],
                    packed[b, 5],
                    packed[b, 6],
                    packed[b, 7],
                )
                dx, dy = packed[b, 2] - packed[a, 2], packed[b, 3] - packed[a, 3]
                dz = packed[b, 4] - packed[a, 4]
            else:
                za, wa, zb, wb = q[a, 2], q[a, 3], q[b, 2], q[b, 3]
                ca, sa = 1 - za * (2 * za), wa * (2 * za)
                cb, sb = 1 - zb * (2 * zb), wb * (2 * zb)
                m_ax, m_ay = (lo[a, 0] + hi[a, 0]) / 2, (lo[a, 1] + hi[a, 1]) / 2
                m_bx, m_by = (lo[b, 0] + hi[b, 0]) / 2, (lo[b, 1] + hi[b, 1]) / 2
                m_az, m_bz = (lo[a, 2] + hi[a, 2]) / 2, (lo[b, 2] + hi[b, 2]) / 2
                hax, hay = (hi[a, 0] - lo[a, 0]) / 2 + grow, (hi[a, 1] - lo[a, 1]) / 2 + grow
                hbx, hby = (hi[b, 0] - lo[b, 0]) / 2 + grow, (hi[b, 1] - lo[b, 1]) / 2 + grow
                haz, hbz = (hi[a, 2] - lo[a, 2]) / 2 + grow, (hi[b, 2] - lo[b, 2]) / 2 + grow
                dx = (pos[b, 0] + (cb * m_bx - sb * m_by)) - (pos[a, 0] + (ca * m_ax - sa * m_ay))
                dy = (pos[b, 1] + (sb * m_bx + cb * m_by)) - (pos[a, 1] + (sa * m_ax + ca * m_ay))
                dz = (pos[b, 2] + m_bz) - (pos[a, 2] + m_az)
            tx, ty = ca * dx + sa * dy, ca * dy - sa * dx
            rc, rs = ca * cb + sa * sb, ca * sb - sa * cb
            arc, ars = abs(rc) + _PARALLEL_EPS, abs(rs) + _PARALLEL_EPS
            ux, uy = rc * tx + rs * ty, rc * ty - rs * tx
            out[k] = (
                SEPARATE
                if (
                    abs(dz) > haz + hbz
                    or abs(tx) > hax + (arc * hbx + ars * hby)
                    or abs(ty) > hay + (ars * hbx + arc * hby)
                    or abs(ux) > hbx + (arc * hax + ars * hay)
                    or abs(uy) > hby + (ars * hax + arc * hay)
                )
                else TOUCHING
            )
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
