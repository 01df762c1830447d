"""A car-like motion model for fleetsim: forward only, with a minimum turning radius.

It moves every car of the simulation in one call per step, as arrays (no loop over cars): the
contract of `fleetsim.control.models`. Register it with `register_motion_model`, or name it in
a scenario file as `motion_mode: "cars:CarLike"` (this file next to the scenario).
"""

from __future__ import annotations

import numpy as np

from fleetsim.control import Motion


class CarLike:
    """Drives forward only; its yaw rate is at most speed / `min_radius_m` (a steering limit).

    It slows down to stop on the goal (`sqrt(2 a d)`), steers towards it, and drives straight on
    while the goal lies inside its turning circle, until it can turn onto it.
    """

    def __init__(self, min_radius_m: float = 2.0) -> None:
        self.min_radius_m = min_radius_m

    def __call__(
        self,
        m: Motion,
        goal: np.ndarray,
        goal_yaw: np.ndarray,
        align: np.ndarray,
        limits: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        dt: float,
    ) -> tuple[Motion, np.ndarray, np.ndarray]:
        max_v, max_a, max_w, _ = limits
        delta = goal[:, :2] - m.pos[:, :2]
        dist = np.hypot(delta[:, 0], delta[:, 1])
        error = np.angle(np.exp(1j * (np.arctan2(delta[:, 1], delta[:, 0]) - m.yaw)))
        speed = np.hypot(m.vel[:, 0], m.vel[:, 1])
        wanted = np.minimum(max_v, np.sqrt(2 * max_a * dist))
        speed = np.clip(wanted, speed - max_a * dt, speed + max_a * dt).clip(min=0.0)
        # A point inside the turning circle cannot be reached by turning now: go straight.
        reachable = dist >= 2 * self.min_radius_m * np.abs(np.sin(error)) - 1e-9
        max_rate = np.minimum(max_w, speed / self.min_radius_m)
        rate = np.where(reachable, np.clip(error / dt, -max_rate, max_rate), 0.0)
        yaw = m.yaw + rate * dt
        step = speed * dt
        lands = step >= dist  # within one step of the goal: stop on it
        pos = m.pos.copy()
        forward = np.column_stack((np.cos(yaw), np.sin(yaw))) * step[:, None]
        pos[:, :2] = np.where(lands[:, None], goal[:, :2], m.pos[:, :2] + forward)
        speed = np.where(lands, 0.0, speed)
        vel = np.zeros_like(m.vel)
        vel[:, 0], vel[:, 1] = np.cos(yaw) * speed, np.sin(yaw) * speed
        rate = np.where(lands, 0.0, rate)
        dist_left = np.hypot(*(goal[:, :2] - pos[:, :2]).T)
        return Motion(pos, yaw, vel, rate), dist_left, np.zeros_like(dist_left)
