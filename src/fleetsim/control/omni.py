"""Omnidirectional motion: straight to the goal in 3-D, turning towards the goal yaw meanwhile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fleetsim.control.kernels import omni_translate
from fleetsim.control.trapezoid import (
    LAND_EPS,
    braking_speed,
    limit_vector_change,
    next_rate,
    turn_lands_on,
)
from fleetsim.geometry import quat
from fleetsim.geometry.vectors import any_set, row_norm

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
    passing: FloatArray | None = None,
) -> tuple[Motion, FloatArray, FloatArray]:
    """One step towards `goal`; returns (new motion, distance left, yaw error left).

    `passing` (N,): the speed a row may still have on the goal (an intermediate waypoint it
    drives through; 0 = stop there).
    """
    max_v, max_a, max_w, max_alpha = limits
    fast = omni_translate(m.pos, m.vel, goal, max_v, max_a, dt, passing)
    if fast is not None:  # a large fleet: the same numbers, compiled
        pos, vel, dist_left, lands = fast
        if not any_set(align) and not any_set(m.yaw_rate):
            return Motion(pos, m.yaw, vel, m.yaw_rate), dist_left, np.zeros(len(pos))
        return _turn(m, pos, vel, lands, goal, goal_yaw, align, max_w, max_alpha, dt)
    delta = goal - m.pos
    dist = row_norm(delta)
    direction = delta / np.maximum(dist, 1e-300)[:, None]
    cap = braking_speed(dist, max_a, dt)
    if passing is not None:  # slow to the passing speed at most (or stop, which is safe too)
        cap = np.maximum(cap, passing)
    wanted = direction * np.minimum(max_v, cap)[:, None]
    vel = limit_vector_change(m.vel, wanted, max_a * dt)
    step = vel * dt
    # Land on the goal only when the step reaches it head-on at a speed that can stop there;
    # a robot too fast for a goal set late overshoots and comes back within its limits.
    along = np.einsum("ij,ij->i", step, direction)
    off_line = row_norm(step - along[:, None] * direction)
    speed = row_norm(vel)
    lands = (along >= dist - LAND_EPS) & (off_line <= LAND_EPS) & (speed <= cap + LAND_EPS)
    pos = np.where(lands[:, None], goal, m.pos + step)
    if passing is None:
        vel = np.where(lands[:, None], delta / dt, vel)
    else:  # through a waypoint: keep moving, at no more than its passing speed
        keep = np.minimum(speed, passing) / np.maximum(speed, 1e-300)
        vel = np.where(
            lands[:, None], np.where((passing > 0)[:, None], vel * keep[:, None], delta / dt), vel
        )

    if not any_set(align) and not any_set(m.yaw_rate):  # driving without turning (a common fleet)
        dist_left = np.where(lands, 0.0, row_norm(goal - pos))
        return Motion(pos, m.yaw, vel, m.yaw_rate), dist_left, np.zeros(len(pos))
    return _turn(m, pos, vel, lands, goal, goal_yaw, align, max_w, max_alpha, dt)


def _turn(
    m: Motion,
    pos: FloatArray,
    vel: FloatArray,
    lands: FloatArray,
    goal: FloatArray,
    goal_yaw: FloatArray,
    align: FloatArray,
    max_w: FloatArray,
    max_alpha: FloatArray,
    dt: float,
) -> tuple[Motion, FloatArray, FloatArray]:
    """The yaw part of `step_omni`, after the translation (pos, vel, lands)."""
    yaw, rate, yaw_left = turn(m.yaw, m.yaw_rate, goal_yaw, align, max_w, max_alpha, dt)
    dist_left = np.where(lands, 0.0, row_norm(goal - pos))
    return Motion(pos, yaw, vel, rate), dist_left, yaw_left


def turn(
    yaw: FloatArray,
    yaw_rate: FloatArray,
    goal_yaw: FloatArray,
    align: FloatArray,
    max_w: FloatArray,
    max_alpha: FloatArray,
    dt: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """One step of an omnidirectional robot's turn towards `goal_yaw` where `align` (else
    braking any yaw rate to rest): (new yaw wrapped, new yaw rate, yaw error left)."""
    yaw_err = np.where(align, quat.wrap_angle(goal_yaw - yaw), 0.0)
    rate = next_rate(yaw_rate, yaw_err, max_w, max_alpha, dt)
    turn_lands = align & turn_lands_on(rate, yaw_err, max_alpha, dt)
    new_yaw = np.where(turn_lands, goal_yaw, yaw + rate * dt)
    rate = np.where(turn_lands, yaw_err / dt, rate)
    yaw_left = np.where(turn_lands | ~align, 0.0, np.abs(quat.wrap_angle(goal_yaw - new_yaw)))
    return quat.wrap_angle(new_yaw), rate, yaw_left
