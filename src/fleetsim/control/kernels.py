"""Compiled omnidirectional driving for large fleets (Numba; see `fleetsim.jit`).

`omni_translate` is the translation part of `fleetsim.control.omni.step_omni` (no waypoint
passing) in one pass over the rows instead of about thirty array operations: the same
formulas, evaluated in the same order, so it gives the NumPy path's numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.jit import MIN_ROWS, compiled

LAND_EPS = 1e-12  # as fleetsim.control.trapezoid.LAND_EPS


def omni_translate(
    pos: np.ndarray, vel: np.ndarray, goal: np.ndarray, max_v: np.ndarray,
    max_a: np.ndarray, dt: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
    """(new positions, new velocities, distance left, landed) of rows driving straight to
    `goal` at up to `max_v` and `max_a`; None for fewer than `MIN_ROWS` rows or without Numba
    (the caller uses NumPy)."""
    n = len(pos)
    kernel = compiled(_omni_translate) if n >= MIN_ROWS else None
    if kernel is None:
        return None
    out_pos, out_vel = np.empty((n, 3)), np.empty((n, 3))
    dist_left, lands = np.empty(n), np.empty(n, dtype=np.bool_)
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (pos, vel, goal, max_v, max_a)]
    kernel(*arrays, float(dt), out_pos, out_vel, dist_left, lands)
    return out_pos, out_vel, dist_left, lands


def _omni_translate(pos: Any, vel: Any, goal: Any, max_v: Any, max_a: Any, dt: float,
                    out_pos: Any, out_vel: Any, dist_left: Any, lands: Any) -> None:  # fmt: skip
    for r in range(pos.shape[0]):
        d0, d1, d2 = goal[r, 0] - pos[r, 0], goal[r, 1] - pos[r, 1], goal[r, 2] - pos[r, 2]
        dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        floor_dist = max(dist, 1e-300)
        e0, e1, e2 = d0 / floor_dist, d1 / floor_dist, d2 / floor_dist  # direction
        u = max_a[r] * dt  # braking_speed
        k = np.floor((np.sqrt(1.0 + 8.0 * dist / (dt * u)) - 1.0) / 2.0)
        cap = (dist / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0)
        wanted = min(max_v[r], cap)
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
        lands[r] = landed
        if landed:
            out_pos[r, 0], out_pos[r, 1], out_pos[r, 2] = goal[r, 0], goal[r, 1], goal[r, 2]
            out_vel[r, 0], out_vel[r, 1], out_vel[r, 2] = d0 / dt, d1 / dt, d2 / dt
            dist_left[r] = 0.0
        else:
            p0, p1, p2 = pos[r, 0] + s0, pos[r, 1] + s1, pos[r, 2] + s2
            out_pos[r, 0], out_pos[r, 1], out_pos[r, 2] = p0, p1, p2
            out_vel[r, 0], out_vel[r, 1], out_vel[r, 2] = v0, v1, v2
            l0, l1, l2 = goal[r, 0] - p0, goal[r, 1] - p1, goal[r, 2] - p2
            dist_left[r] = np.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
