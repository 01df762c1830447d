"""Planar range scans of many sensors at once against `RayShapes`: the nearest hit along each
beam, exact for boxes (any orientation), spheres and upright cylinders.

Every beam lies in the horizontal plane of its sensor. A scan finds the shapes near its sensor
through a grid of the shapes' boxes (`ShapeGrid`), keeps those whose box spans the sensor's
height and comes within range, and for each works out which beams can meet it (the angles of
its box's corners seen from the sensor: a few beams for a robot, many for a wall) and tests
only those, exactly: a slab test in the box's own frame, or the quadratic of a sphere or a
circle. A shape around the sensor's origin is not seen (PyBullet's `rayTestBatch` does the
same: a ray leaving a body does not hit it), nor one the beam only grazes.

Compiled (`fleetsim.jit`), sensors split over both cores (`fleetsim.parallel`); without Numba
the same tests as array operations over (sensor, shape, beam) triples, the same numbers.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim import parallel
from fleetsim.geometry.vectors import ramp
from fleetsim.jit import compiled
from fleetsim.sensors.shapes import BOX, CYLINDER, SPHERE, RayShapes

FloatArray = np.ndarray
IntArray = np.ndarray

_WIDEN = 1e-5  # radians: a shape's beams are those within its corners' angles widened by this
_SPLIT = 64  # sensors from which a scan runs in two halves on two threads


@dataclass(frozen=True)
class Beams:
    """The beams of one sensor model, in the sensor's frame.

    Attributes:
        angle_min: the first beam's angle, radians (0: the sensor's x axis).
        increment: the angle between beams, radians (> 0).
        count: how many beams.
        range_max: metres; hits beyond are not reported.
    """

    angle_min: float
    increment: float
    count: int
    range_max: float

    @functools.cached_property
    def cos_sin(self) -> tuple[FloatArray, FloatArray]:
        """cos and sin of each beam's angle in the sensor's frame."""
        angles = self.angle_min + self.increment * np.arange(self.count)
        return np.cos(angles), np.sin(angles)

    def directions(self, yaws: FloatArray) -> tuple[FloatArray, FloatArray]:
        """World x and y of each beam's unit direction for sensors turned by `yaws` (S,): two
        (S, count) arrays, as the scan computes them."""
        c, s = self.cos_sin
        cy, sy = np.cos(yaws)[:, None], np.sin(yaws)[:, None]
        return cy * c - sy * s, sy * c + cy * s


@dataclass(frozen=True)
class ShapeGrid:
    """The shapes' boxes binned on a square grid: cell (ix, iy) holds the shapes whose box
    covers it (`items[start[c]:start[c + 1]]`, c = ix * ny + iy)."""

    x0: float
    y0: float
    cell: float
    nx: int
    ny: int
    start: IntArray
    items: IntArray

    def rings(self, reach: float) -> IntArray:
        """The cell offsets (dx, dy) about a cell whose cells can hold points within `reach`
        metres of a point in it, nearest first, with how near (whole cells) each can be: (R, 3)
        int64."""
        span = math.ceil(reach / self.cell)
        grid_x, grid_y = np.meshgrid(np.arange(-span, span + 1), np.arange(-span, span + 1))
        dx, dy = grid_x.ravel(), grid_y.ravel()
        gap = np.maximum(np.abs(dx) - 1, 0) ** 2 + np.maximum(np.abs(dy) - 1, 0) ** 2
        keep = gap * self.cell**2 <= reach**2
        order = np.argsort(gap[keep], kind="stable")
        return np.stack((dx[keep][order], dy[keep][order], gap[keep][order]), axis=1)

    @classmethod
    def build(cls, shapes: RayShapes, cell: float) -> ShapeGrid:
        """The grid of `shapes` with square cells `cell` metres wide."""
        if not len(shapes):
            return cls(0.0, 0.0, cell, 1, 1, np.zeros(2, dtype=np.int64), np.empty(0, np.int64))
        x0, y0 = float(shapes.lo[:, 0].min()), float(shapes.lo[:, 1].min())
        ix0 = np.floor((shapes.lo[:, 0] - x0) / cell).astype(np.int64)
        iy0 = np.floor((shapes.lo[:, 1] - y0) / cell).astype(np.int64)
        ix1 = np.floor((shapes.hi[:, 0] - x0) / cell).astype(np.int64)
        iy1 = np.floor((shapes.hi[:, 1] - y0) / cell).astype(np.int64)
        nx, ny = int(ix1.max()) + 1, int(iy1.max()) + 1
        wide, tall = ix1 - ix0 + 1, iy1 - iy0 + 1
        counts = wide * tall
        shape = np.repeat(np.arange(len(shapes)), counts)
        k = ramp(counts)
        per_row = np.repeat(tall, counts)
        cells = (np.repeat(ix0, counts) + k // per_row) * ny + np.repeat(iy0, counts) + k % per_row
        order = np.argsort(cells, kind="stable")
        start = np.zeros(nx * ny + 1, dtype=np.int64)
        np.cumsum(np.bincount(cells, minlength=nx * ny), out=start[1:])
        return cls(x0, y0, cell, nx, ny, start, shape[order])


def scan(
    shapes: RayShapes,
    grid: ShapeGrid,
    origins: FloatArray,
    yaws: FloatArray,
    owners: IntArray,
    beams: Beams,
) -> FloatArray:
    """Distance to the nearest hit of each beam of each sensor, inf for none within
    `beams.range_max`: (S, count) float64. Sensors at `origins` (S, 3) turned by `yaws` (S,);
    the shapes of body `owners[s]` (its handle, -1 for none) and of bodies attached to it are
    not seen by sensor s."""
    origins = np.ascontiguousarray(origins, dtype=np.float64)
    yaws = np.ascontiguousarray(yaws, dtype=np.float64)
    owners = np.ascontiguousarray(owners, dtype=np.int64)
    out = np.full((len(origins), beams.count), np.inf)
    if not len(origins) or not len(shapes):
        return out
    kernel = compiled(_scan_rows)
    if kernel is None:
        _scan_numpy(shapes, origins, yaws, owners, beams, out)
        out[out > beams.range_max] = np.inf
        return out
    turned = np.stack((np.cos(yaws), np.sin(yaws)), axis=1)
    first_beam = yaws + beams.angle_min
    based = np.stack((np.cos(first_beam), np.sin(first_beam)), axis=1)
    c, s = beams.cos_sin
    setup = (beams.increment, beams.range_max, c, s)
    geometry = (
        shapes.kind,
        shapes.centre,
        shapes.rot,
        shapes.half,
        shapes.lo,
        shapes.hi,
        shapes.handles,
        shapes.parents,
    )
    cells = (grid.x0, grid.y0, grid.cell, grid.nx, grid.ny, grid.start, grid.items)
    rings = grid.rings(beams.range_max)

    def part(first: int, stop: int) -> None:
        seen = np.zeros(len(shapes), dtype=np.int64)
        kernel(
            first, stop, origins, turned, based, owners, *setup, *geometry, *cells, rings, seen, out
        )

    halves = parallel.halves(len(origins), _SPLIT)
    parallel.run([functools.partial(part, a, b) for a, b in halves])
    out[out > beams.range_max] = np.inf
    return out


def _scan_rows(
    first: int,
    stop: int,
    origins: Any,
    turned: Any,
    based: Any,
    owners: Any,
    increment: float,
    range_max: float,
    cos_b: Any,
    sin_b: Any,
    kind: Any,
    centre: Any,
    rot: Any,
    half: Any,
    lo: Any,
    hi: Any,
    handles: Any,
    parents: Any,
    x0: float,
    y0: float,
    cell: float,
    nx: int,
    ny: int,
    start: Any,
    items: Any,
    rings: Any,
    seen: Any,
    out: Any,
) -> None:
    """Sensors first..stop-1 (see `scan`): `turned` (S, 2) the cos and sin of each sensor's
    yaw, `based` of its first beam's angle; `rings` (R, 3) the grid's cell offsets about a
    sensor's cell, nearest first (dx, dy, and how near that cell can be in whole cells);
    `seen` (M,) zeros, this thread's."""
    count = cos_b.shape[0]
    turn = 2.0 * math.pi
    for s in range(first, stop):
        ox, oy, oz = origins[s, 0], origins[s, 1], origins[s, 2]
        cy, sy = turned[s, 0], turned[s, 1]
        ux, uy = based[s, 0], based[s, 1]
        home_x = math.floor((ox - x0) / cell)
        home_y = math.floor((oy - y0) / cell)
        for ring in range(rings.shape[0]):
            ix, iy = home_x + rings[ring, 0], home_y + rings[ring, 1]
            if ix < 0 or ix >= nx or iy < 0 or iy >= ny:
                continue
            c = ix * ny + iy
            if start[c + 1] == start[c]:
                continue
            # a far cell all of whose beams already met something nearer than it is skipped:
            # what its shapes could give them is farther (a shape's part elsewhere is in the
            # cells it covers there)
            px = x0 + (ix + 0.5) * cell - ox
            py = y0 + (iy + 0.5) * cell - oy
            d2 = px * px + py * py
            round2 = 0.5 * cell * cell  # (the cell's circle, squared radius)
            if d2 > 4.0 * round2:
                near = math.sqrt(d2) - math.sqrt(round2)
                gap = near * near
                vx, vy = ux, uy
                ay, ax = vx * py - vy * px, vx * px + vy * py
                big, small = max(abs(ax), abs(ay)), min(abs(ax), abs(ay))
                a = small / big
                a2 = a * a
                phi = a * (
                    0.99997726
                    + a2
                    * (
                        -0.33262347
                        + a2
                        * (0.19354346 + a2 * (-0.11643287 + a2 * (0.05265332 + a2 * -0.01172120)))
                    )
                )
                if abs(ay) > abs(ax):
                    phi = 0.5 * math.pi - phi
                if ax < 0.0:
                    phi = math.pi - phi
                if ay < 0.0:
                    phi = -phi
                spread = math.sqrt(round2 / (d2 - round2)) + _WIDEN  # >= asin(radius / d)
                c0 = phi - spread
                c0 -= turn * math.floor(c0 / turn)
                c1 = c0 + 2.0 * spread
                hidden = True
                for window in range(2):
                    if window == 1 and c1 <= turn:
                        break
                    k0 = max(math.ceil((c0 - window * turn) / increment), 0)
                    k1 = min(math.floor((c1 - window * turn) / increment), count - 1)
                    for k in range(k0, k1 + 1):
                        if out[s, k] * out[s, k] > gap:
                            hidden = False
                            break
                    if not hidden:
                        break
                if hidden:
                    continue
            for e in range(start[c], start[c + 1]):
                m = items[e]
                if seen[m] == s + 1:
                    continue
                seen[m] = s + 1
                if owners[s] >= 0 and (handles[m] == owners[s] or parents[m] == owners[s]):
                    continue
                if not (lo[m, 2] < oz < hi[m, 2]):
                    continue  # (a beam level with a box's top or bottom only grazes it)
                ex = max(lo[m, 0] - ox, ox - hi[m, 0], 0.0)
                ey = max(lo[m, 1] - oy, oy - hi[m, 1], 0.0)
                gap = ex * ex + ey * ey  # (squared: no hit on it is nearer)
                if gap > range_max * range_max:
                    continue
                # the beams that can meet it: all of them from inside its box, else those
                # between its box's corners (or, seen from afar, its circle's sides), whose
                # angles (from the centre's, which is from the first beam's) are found to
                # 2e-6 rad and widened by `_WIDEN`
                w0, w1 = 0.0, turn
                if gap > 0.0:
                    px = (lo[m, 0] + hi[m, 0]) * 0.5 - ox
                    py = (lo[m, 1] + hi[m, 1]) * 0.5 - oy
                    d2 = px * px + py * py
                    rx, ry = (hi[m, 0] - lo[m, 0]) * 0.5, (hi[m, 1] - lo[m, 1]) * 0.5
                    round2 = rx * rx + ry * ry  # (the box's circle, squared radius)
                    far = d2 > 4.0 * round2  # (under 30 degrees: the circle's span will do)
                    phi, least, most = 0.0, math.inf, -math.inf
                    for corner in range(5):
                        if corner == 1 and far:
                            spread = math.sqrt(round2 / (d2 - round2))  # >= asin(radius / d)
                            least, most = -spread, spread
                            break
                        if corner == 0:
                            vx, vy, qx, qy = ux, uy, px, py
                        else:
                            vx, vy = px, py
                            qx = (lo[m, 0] if corner < 3 else hi[m, 0]) - ox
                            qy = (lo[m, 1] if corner % 2 == 1 else hi[m, 1]) - oy
                        ay, ax = vx * qy - vy * qx, vx * qx + vy * qy  # (sin, cos) x |v||q|
                        big, small = max(abs(ax), abs(ay)), min(abs(ax), abs(ay))
                        a = small / big
                        a2 = a * a
                        angle = a * (
                            0.99997726
                            + a2
                            * (
                                -0.33262347
                                + a2
                                * (
                                    0.19354346
                                    + a2 * (-0.11643287 + a2 * (0.05265332 + a2 * -0.01172120))
                                )
                            )
                        )
                        if abs(ay) > abs(ax):
                            angle = 0.5 * math.pi - angle
                        if ax < 0.0:
                            angle = math.pi - angle
                        if ay < 0.0:
                            angle = -angle
                        if corner == 0:
                            phi = angle
                        else:
                            least, most = min(least, angle), max(most, angle)
                    w0 = phi + least - _WIDEN
                    w0 -= turn * math.floor(w0 / turn)
                    w1 = w0 + (most - least) + 2.0 * _WIDEN
                # the shape's frame: the sensor's origin there (a box's beams: per beam, a sum
                # of the images of the world's x and y axes)
                k_m = kind[m]
                dx0, dy0, dz0 = ox - centre[m, 0], oy - centre[m, 1], oz - centre[m, 2]
                r = rot[m]
                bx = r[0] * dx0 + r[3] * dy0 + r[6] * dz0
                by = r[1] * dx0 + r[4] * dy0 + r[7] * dz0
                bz = r[2] * dx0 + r[5] * dy0 + r[8] * dz0
                hx, hy, hz = half[m, 0], half[m, 1], half[m, 2]
                if k_m == CYLINDER and not (-hz < bz < hz):
                    continue
                if k_m == BOX and abs(bx) < hx and abs(by) < hy and abs(bz) < hz:
                    continue  # (around the sensor)
                near = dx0 * dx0 + dy0 * dy0 - hx * hx  # circle, sphere: |o - c|^2 - r^2
                if k_m == SPHERE:
                    near += dz0 * dz0
                if k_m != BOX and near < 0.0:
                    continue  # (around the sensor)
                for window in range(2):
                    if window == 1 and w1 <= turn:
                        break  # (the second: the part past a full turn, the first beams)
                    k0 = max(math.ceil((w0 - window * turn) / increment), 0)
                    k1 = min(math.floor((w1 - window * turn) / increment), count - 1)
                    hidden = True  # every beam here already met something nearer
                    for k in range(k0, k1 + 1):
                        if out[s, k] * out[s, k] > gap:
                            hidden = False
                            break
                    if hidden:
                        continue
                    for k in range(k0, k1 + 1):
                        dx = cy * cos_b[k] - sy * sin_b[k]
                        dy = sy * cos_b[k] + cy * sin_b[k]
                        if k_m == BOX:  # slabs: where the beam is inside all three
                            enter, leave = -math.inf, math.inf
                            for axis in range(3):
                                at = bx if axis == 0 else (by if axis == 1 else bz)
                                h = hx if axis == 0 else (hy if axis == 1 else hz)
                                d = r[axis] * dx + r[3 + axis] * dy
                                if d == 0.0:
                                    if not (-h < at < h):
                                        enter = math.inf
                                else:
                                    t1, t2 = (-h - at) / d, (h - at) / d
                                    enter = max(enter, min(t1, t2))
                                    leave = min(leave, max(t1, t2))
                            t = enter if 0.0 <= enter <= leave else math.inf
                        else:
                            b = dx0 * dx + dy0 * dy
                            disc = b * b - near
                            t = -b - math.sqrt(disc) if disc >= 0.0 else math.inf
                            t = t if t >= 0.0 else math.inf
                        if t < out[s, k]:
                            out[s, k] = t


_PAIRS_AT_ONCE = 1 << 22  # (sensor, shape) tests per chunk of the NumPy path


def _scan_numpy(
    shapes: RayShapes,
    origins: FloatArray,
    yaws: FloatArray,
    owners: IntArray,
    beams: Beams,
    out: FloatArray,
) -> None:
    """`_scan_rows` as array operations: the (sensor, shape) pairs in range, then each pair's
    beams, the same tests and numbers."""
    chunk = max(1, _PAIRS_AT_ONCE // len(shapes))
    for first in range(0, len(origins), chunk):
        stop = min(first + chunk, len(origins))
        s, m = _pairs_in_range(shapes, origins[first:stop], owners[first:stop], beams.range_max)
        _hit_pairs(shapes, origins, yaws, beams, s + first, m, out)


def _pairs_in_range(
    shapes: RayShapes, origins: FloatArray, owners: IntArray, range_max: float
) -> tuple[IntArray, IntArray]:
    """(sensor, shape) pairs where the shape's box spans the sensor's height (strictly), comes
    within range, is not the sensor's body nor attached to it, and does not hold the sensor."""
    ox, oy, oz = (origins[:, axis, None] for axis in range(3))
    lo, hi = shapes.lo, shapes.hi
    ok = (lo[:, 2] < oz) & (oz < hi[:, 2])
    own = owners[:, None]
    ok &= (own < 0) | ((shapes.handles != own) & (shapes.parents != own))
    ex = np.maximum(np.maximum(lo[:, 0] - ox, ox - hi[:, 0]), 0.0)
    ey = np.maximum(np.maximum(lo[:, 1] - oy, oy - hi[:, 1]), 0.0)
    ok &= ex * ex + ey * ey <= range_max * range_max
    s, m = np.nonzero(ok)
    centre, half, kind = shapes.centre[m], shapes.half[m], shapes.kind[m]
    d = origins[s] - centre
    local = np.einsum("pji,pj->pi", shapes.rot[m].reshape(-1, 3, 3), d)
    inside = (kind == BOX) & (np.abs(local) < half).all(axis=1)
    near = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] - half[:, 0] * half[:, 0]
    near = np.where(kind == SPHERE, near + d[:, 2] * d[:, 2], near)
    inside |= (kind != BOX) & (near < 0.0)
    inside |= (kind == CYLINDER) & ~((-half[:, 2] < local[:, 2]) & (local[:, 2] < half[:, 2]))
    return s[~inside], m[~inside]


def _hit_pairs(
    shapes: RayShapes,
    origins: FloatArray,
    yaws: FloatArray,
    beams: Beams,
    s: IntArray,
    m: IntArray,
    out: FloatArray,
) -> None:
    """Each pair's beams between its box's corner angles (all from inside its box), tested."""
    turn = 2.0 * math.pi
    o, lo, hi = origins[s], shapes.lo[m], shapes.hi[m]
    ex = np.maximum(np.maximum(lo[:, 0] - o[:, 0], o[:, 0] - hi[:, 0]), 0.0)
    ey = np.maximum(np.maximum(lo[:, 1] - o[:, 1], o[:, 1] - hi[:, 1]), 0.0)
    px = (lo[:, 0] + hi[:, 0]) * 0.5 - o[:, 0]
    py = (lo[:, 1] + hi[:, 1]) * 0.5 - o[:, 1]
    rel = np.empty((len(s), 4))
    for corner in range(4):
        qx = (lo[:, 0] if corner < 2 else hi[:, 0]) - o[:, 0]
        qy = (lo[:, 1] if corner % 2 == 0 else hi[:, 1]) - o[:, 1]
        rel[:, corner] = np.arctan2(px * qy - py * qx, px * qx + py * qy)
    least, most = rel.min(axis=1), rel.max(axis=1)
    w0 = np.arctan2(py, px) + least - (yaws[s] + beams.angle_min) - _WIDEN
    w0 -= turn * np.floor(w0 / turn)
    w1 = w0 + (most - least) + 2.0 * _WIDEN
    outside = (ex > 0.0) | (ey > 0.0)
    w0, w1 = np.where(outside, w0, 0.0), np.where(outside, w1, turn)
    pair, beam = [], []
    for window in range(2):
        a0, a1 = w0 - window * turn, w1 - window * turn
        k0 = np.maximum(np.ceil(a0 / beams.increment), 0).astype(np.int64)
        k1 = np.minimum(np.floor(a1 / beams.increment), beams.count - 1).astype(np.int64)
        counts = np.maximum(k1 - k0 + 1, 0)
        if window == 1:
            counts[w1 <= turn] = 0
        p = np.repeat(np.arange(len(s)), counts)
        pair.append(p)
        beam.append(k0[p] + np.arange(len(p)) - np.repeat(np.cumsum(counts) - counts, counts))
    p, k = np.concatenate(pair), np.concatenate(beam)
    t = _distances(shapes, origins, yaws, beams, s[p], m[p], k)
    np.minimum.at(out, (s[p], k), t)


def _distances(
    shapes: RayShapes,
    origins: FloatArray,
    yaws: FloatArray,
    beams: Beams,
    s: IntArray,
    m: IntArray,
    k: IntArray,
) -> FloatArray:
    """Distance along beam k of sensor s to shape m (inf: no hit), for arrays of triples."""
    c, sn = beams.cos_sin
    cy, sy = np.cos(yaws)[s], np.sin(yaws)[s]
    dx = cy * c[k] - sy * sn[k]
    dy = sy * c[k] + cy * sn[k]
    d0 = origins[s] - shapes.centre[m]
    r, half, kind = shapes.rot[m], shapes.half[m], shapes.kind[m]
    enter = np.full(len(s), -np.inf)
    leave = np.full(len(s), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for axis in range(3):
            at = r[:, axis] * d0[:, 0] + r[:, 3 + axis] * d0[:, 1] + r[:, 6 + axis] * d0[:, 2]
            h = half[:, axis]
            d = r[:, axis] * dx + r[:, 3 + axis] * dy
            t1, t2 = (-h - at) / d, (h - at) / d
            parallel_ = d == 0.0
            enter = np.where(parallel_, enter, np.maximum(enter, np.minimum(t1, t2)))
            leave = np.where(parallel_, leave, np.minimum(leave, np.maximum(t1, t2)))
            enter[parallel_ & ~((-h < at) & (at < h))] = np.inf
        box_t = np.where((enter >= 0.0) & (enter <= leave), enter, np.inf)
        near = d0[:, 0] * d0[:, 0] + d0[:, 1] * d0[:, 1] - half[:, 0] * half[:, 0]
        near = np.where(kind == SPHERE, near + d0[:, 2] * d0[:, 2], near)
        b = d0[:, 0] * dx + d0[:, 1] * dy
        disc = b * b - near
        round_t = np.where(disc >= 0.0, -b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
        round_t = np.where(round_t >= 0.0, round_t, np.inf)
    result: FloatArray = np.where(kind == BOX, box_t, round_t)
    return result
