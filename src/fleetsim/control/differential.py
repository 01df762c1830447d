"""Differential-drive motion: turn in place towards the goal, drive straight, then final turn.

The robot only ever moves along its heading. It turns only at rest: a new goal off its heading
makes it brake first. Turns land exactly on the wanted heading, so the straight drive that follows
has no sideways component.
"""

from __future__ import annotations

import numpy as np

from fleetsim.control.omni import Motion
from fleetsim.control.trapezoid import (
    LAND_EPS,
    braking_speed,
    next_rate,
    next_speed,
    turn_lands_on,
)
from fleetsim.geometry import quat
from fleetsim.geometry.vectors import row_norm

FloatArray = np.ndarray

ALIGNED_RAD = 1e-9


def heading_of(yaw: FloatArray) -> FloatArray:
    """(cos, sin) (N, 2) of `yaw`, from the sine and cosine of half the wrapped angle, as the
    robot's quaternion holds them (c^2 - s^2, 2 s c): one pair of sines for the heading and
    the quaternion both (the compiled step computes it so too)."""
    half = quat.wrap_angle(yaw) / 2
    s, c = np.sin(half), np.cos(half)
    return np.column_stack((c * c - s * s, 2 * s * c))


def step_differential(
    m: Motion,
    goal: FloatArray,
    goal_yaw: FloatArray,
    align: FloatArray,
    limits: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    dt: float,
    passing: FloatArray | None = None,
) -> tuple[Motion, FloatArray, FloatArray]:
    """One step towards `goal` (x, y; z is kept); returns (new motion, distance, yaw error).

    `passing` (N,): speed a row may keep on the goal (a waypoint straight ahead on its path).
    """
    max_v, max_a, max_w, max_alpha = limits
    delta = goal[:, :2] - m.pos[:, :2]
    dist = row_norm(delta)
    at_goal = dist == 0.0
    heading = np.arctan2(delta[:, 1], delta[:, 0])
    wanted_yaw = np.where(at_goal, np.where(align, goal_yaw, m.yaw), heading)
    yaw_err = quat.wrap_angle(wanted_yaw - m.yaw)
    aligned = np.abs(yaw_err) <= ALIGNED_RAD
    speed = row_norm(m.vel[:, :2])

    # Drive along the heading when aligned with the goal; otherwise brake to rest.
    new_speed = next_speed(speed, np.where(aligned & ~at_goal, dist, 0.0), max_v, max_a, dt)
    pass_v = np.zeros(len(dist)) if passing is None else passing
    through = (pass_v > 0) & aligned
    if through.any():  # no need to stop at a waypoint straight ahead: keep up to its speed
        cruise = np.clip(pass_v, speed - max_a * dt, speed + max_a * dt).clip(min=0.0)
        new_speed = np.where(through, np.maximum(new_speed, np.minimum(cruise, max_v)), new_speed)
    # Turn only at rest.
    at_rest = (speed == 0.0) & (new_speed == 0.0)
    rate = next_rate(m.yaw_rate, np.where(at_rest, yaw_err, 0.0), max_w, max_alpha, dt)
    turn_lands = at_rest & ~aligned & turn_lands_on(rate, yaw_err, max_alpha, dt)
    yaw = np.where(turn_lands, wanted_yaw, np.where(aligned, wanted_yaw, m.yaw + rate * dt))
    rate = np.where(turn_lands, yaw_err / dt, np.where(aligned, 0.0, rate))

    forward = heading_of(yaw)
    step = new_speed * dt
    # As for omni: land only at a speed that can stop there; too fast means overshoot.
    cap = braking_speed(dist, max_a, dt)
    if through.any():
        cap = np.where(through, np.maximum(cap, pass_v), cap)
    lands = aligned & ~at_goal & (step >= dist - LAND_EPS) & (new_speed <= cap + LAND_EPS)
    pos = m.pos.copy()
    pos[:, :2] = np.where(lands[:, None], goal[:, :2], m.pos[:, :2] + forward * step[:, None])
    new_speed = np.where(lands & ~through, dist / dt, new_speed)
    vel = np.zeros_like(m.vel)
    vel[:, :2] = forward * new_speed[:, None]
    dist_left = np.where(lands, 0.0, row_norm(goal[:, :2] - pos[:, :2]))
    final_err = np.where(align, np.abs(quat.wrap_angle(goal_yaw - yaw)), 0.0)
    return Motion(pos, quat.wrap_angle(yaw), vel, rate), dist_left, final_err
