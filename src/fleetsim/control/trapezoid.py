"""Trapezoidal speed profiles in discrete time, vectorised.

Positions advance by the new speed times `dt` each step, and speed changes by at most u = a dt.
Braking from v in k full steps (v, v - u, ..., v - k u, then 0) covers
dt ((k + 1) v - u k (k + 1) / 2), which is continuous and increasing in v; `braking_speed` inverts
it exactly. A robot that never exceeds that cap stops exactly on the goal, its last step shorter
than u dt, so the acceleration limit holds all the way to rest.
"""

from __future__ import annotations

import numpy as np

from fleetsim.geometry.vectors import row_norm

FloatArray = np.ndarray

LAND_EPS = 1e-12


def braking_speed(distance: FloatArray, accel: FloatArray, dt: float) -> FloatArray:
    """Highest speed from which braking at `accel` in steps of `dt` stops exactly at `distance`."""
    u = accel * dt
    k = np.floor((np.sqrt(1.0 + 8.0 * distance / (dt * u)) - 1.0) / 2.0)
    result: FloatArray = (distance / dt + u * k * (k + 1.0) / 2.0) / (k + 1.0)
    return result


def next_speed(
    speed: FloatArray, distance: FloatArray, vmax: FloatArray, accel: FloatArray, dt: float
) -> FloatArray:
    """Speed for the next step when a stop is `distance` ahead: accelerate, cruise or brake."""
    target = np.minimum(vmax, braking_speed(distance, accel, dt))
    result: FloatArray = np.maximum(
        np.minimum(np.maximum(target, speed - accel * dt), speed + accel * dt), 0.0
    )
    return result


def next_rate(
    rate: FloatArray, error: FloatArray, rmax: FloatArray, accel: FloatArray, dt: float
) -> FloatArray:
    """Signed rate (e.g. yaw rate) for the next step towards a signed `error` (0: brake to rest)."""
    target = np.sign(error) * np.minimum(rmax, braking_speed(np.abs(error), accel, dt))
    # (np.clip written out: its wrapping costs more than the clipping for a small fleet)
    result: FloatArray = np.minimum(np.maximum(target, rate - accel * dt), rate + accel * dt)
    return result


def limit_vector_change(
    current: FloatArray, target: FloatArray, max_change: FloatArray
) -> FloatArray:
    """`current` moved towards `target` (N, 3) by at most `max_change` (N,) in length."""
    delta = target - current
    norm = row_norm(delta)
    scale = np.minimum(1.0, max_change / np.maximum(norm, 1e-300))
    result: FloatArray = current + delta * scale[:, None]
    return result


def turn_lands_on(rate: FloatArray, error: FloatArray, accel: FloatArray, dt: float) -> FloatArray:
    """Whether a turn at `rate` ends exactly on the target this step (and can stop there)."""
    reaches = np.abs(rate * dt) >= np.abs(error) - LAND_EPS
    same_way = np.sign(rate) == np.sign(error)
    can_stop = np.abs(rate) <= braking_speed(np.abs(error), accel, dt) + LAND_EPS
    result: FloatArray = reaches & same_way & can_stop
    return result
