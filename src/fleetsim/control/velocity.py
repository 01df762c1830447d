"""Velocity commands (cmd_vel): body-frame (vx, vy, wz) held until a timeout, then a stop.

Speeds change at most by the acceleration limits. Differential robots ignore vy: they move only
along their heading (forward or backward).
"""

from __future__ import annotations

import numpy as np

from fleetsim.control.omni import Motion
from fleetsim.control.trapezoid import limit_vector_change
from fleetsim.geometry.vectors import row_norm

FloatArray = np.ndarray


def step_velocity(
    m: Motion,
    cmd_lin: FloatArray,
    cmd_ang: FloatArray,
    active: FloatArray,
    differential: FloatArray,
    limits: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    dt: float,
) -> Motion:
    """One step following the commands (rows where `active`), or braking to rest (others)."""
    max_v, max_a, max_w, max_alpha = limits
    cos, sin = np.cos(m.yaw), np.sin(m.yaw)
    vx = np.where(active, cmd_lin[:, 0], 0.0)
    vy = np.where(active & ~differential, cmd_lin[:, 1], 0.0)
    wanted = np.column_stack((cos * vx - sin * vy, sin * vx + cos * vy, np.zeros_like(vx)))
    norm = row_norm(wanted)
    wanted *= np.minimum(1.0, max_v / np.maximum(norm, 1e-300))[:, None]

    # Differential: a signed forward speed along the (turning) heading, never sideways.
    forward_speed = m.vel[:, 0] * cos + m.vel[:, 1] * sin
    wanted_forward = np.clip(vx, -max_v, max_v)
    diff_speed = np.clip(wanted_forward, forward_speed - max_a * dt, forward_speed + max_a * dt)
    omni_vel = limit_vector_change(m.vel, wanted, max_a * dt)

    wanted_rate = np.clip(np.where(active, cmd_ang, 0.0), -max_w, max_w)
    rate = np.clip(wanted_rate, m.yaw_rate - max_alpha * dt, m.yaw_rate + max_alpha * dt)
    yaw = m.yaw + rate * dt
    heading = np.column_stack((np.cos(yaw), np.sin(yaw), np.zeros_like(yaw)))
    vel = np.where(differential[:, None], heading * diff_speed[:, None], omni_vel)
    return Motion(m.pos + vel * dt, yaw, vel, rate)
