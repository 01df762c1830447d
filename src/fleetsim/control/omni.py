"""Omnidirectional motion: straight to the goal in 3-D, turning towards the goal yaw meanwhile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fleetsim.control.trapezoid import braking_speed, limit_vector_change, next_rate
from fleetsim.geometry import quat

FloatArray = np.ndarray


@dataclass
class Motion:
    """Per-row state in and out of a controller step. Shapes: (N, 3) or (N,)."""

    pos: FloatArray
    yaw: FloatArray
    vel: FloatArray
    yaw_rate: FloatArray


def step_omni(
    m: Motion,
    goal: FloatArray,
    goal_yaw: FloatArray,
    align: FloatArray,
    limits: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    dt: float,
) -> tuple[Motion, FloatArray, FloatArray]:
    """One step towards `goal`; returns (new motion, distance left, yaw error left)."""
    max_v, max_a, max_w, max_alpha = limits
    delta = goal - m.pos
    dist = np.linalg.norm(delta, axis=1)
    direction = delta / np.maximum(dist, 1e-300)[:, None]
    wanted = direction * np.minimum(max_v, braking_speed(dist, max_a, dt))[:, None]
    vel = limit_vector_change(m.vel, wanted, max_a * dt)
    step = vel * dt
    lands = np.linalg.norm(step, axis=1) >= dist
    pos = np.where(lands[:, None], goal, m.pos + step)
    vel = np.where(lands[:, None], delta / dt, vel)

    yaw_err = np.where(align, quat.wrap_angle(goal_yaw - m.yaw), 0.0)
    rate = next_rate(m.yaw_rate, yaw_err, max_w, max_alpha, dt)
    turn_lands = (
        align & (np.abs(rate * dt) >= np.abs(yaw_err)) & (np.sign(rate) == np.sign(yaw_err))
    )
    yaw = np.where(turn_lands, goal_yaw, m.yaw + rate * dt)
    rate = np.where(turn_lands, yaw_err / dt, rate)
    dist_left = np.where(lands, 0.0, dist - np.linalg.norm(step, axis=1))
    yaw_left = np.where(turn_lands | ~align, 0.0, np.abs(quat.wrap_angle(goal_yaw - yaw)))
    return Motion(pos, quat.wrap_angle(yaw), vel, rate), dist_left, yaw_left
