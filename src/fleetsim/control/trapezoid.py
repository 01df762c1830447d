"""Trapezoidal speed profiles in discrete time, vectorised.

A robot that brakes at `accel` in steps of `dt` (position advanced by the new speed each step)
covers v^2 / (2 a) + v dt / 2 before stopping, so the fastest speed that still stops within `d` is
a (sqrt(dt^2/4 + 2 d / a) - dt/2). Approaching a goal with that cap, and changing speed by at most
`accel * dt` per step, gives a trapezoid that ends on the goal without overshoot.
"""

from __future__ import annotations

import numpy as np

FloatArray = np.ndarray


def braking_speed(distance: FloatArray, accel: FloatArray, dt: float) -> FloatArray:
    """Highest speed from which braking at `accel` stops within `distance` (same units / s)."""
    result: FloatArray = accel * (np.sqrt(0.25 * dt * dt + 2.0 * distance / accel) - 0.5 * dt)
    return result


def next_speed(
    speed: FloatArray, distance: FloatArray, vmax: FloatArray, accel: FloatArray, dt: float
) -> FloatArray:
    """Speed for the next step when a stop is `distance` ahead: accelerate, cruise or brake."""
    target = np.minimum(vmax, braking_speed(distance, accel, dt))
    result: FloatArray = np.clip(target, speed - accel * dt, speed + accel * dt).clip(min=0.0)
    return result


def next_rate(
    rate: FloatArray, error: FloatArray, rmax: FloatArray, accel: FloatArray, dt: float
) -> FloatArray:
    """Signed rate (e.g. yaw rate) for the next step towards a signed `error` (0: brake to rest)."""
    target = np.sign(error) * np.minimum(rmax, braking_speed(np.abs(error), accel, dt))
    result: FloatArray = np.clip(target, rate - accel * dt, rate + accel * dt)
    return result


def limit_vector_change(
    current: FloatArray, target: FloatArray, max_change: FloatArray
) -> FloatArray:
    """`current` moved towards `target` (N, 3) by at most `max_change` (N,) in length."""
    delta = target - current
    norm = np.linalg.norm(delta, axis=1)
    scale = np.minimum(1.0, max_change / np.maximum(norm, 1e-300))
    result: FloatArray = current + delta * scale[:, None]
    return result
