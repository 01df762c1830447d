"""Lidars at scale for `fleetsim bench --sensors N`: the warehouse grown for N robots, every one
the bundled `mobile_robot_lidar` (a 360-beam lidar all round, 20 m, 10 Hz), run by its fleet
manager with collisions checked every step: rays a second of the step's sensing phase and the
real-time factor (`benchmarks/sensors.py` has the same beside PyBullet's ray batch, the 10,000
robot case and the safety fields)."""

from __future__ import annotations

from typing import Any

from fleetsim.bench.fleet import run_fleet

LIDAR_MODEL = "robots[0].model=mobile_robot_lidar"


def run_sensors(robots: int, seconds: float) -> dict[str, Any]:
    """The row of N robots with lidars under the fleet manager for `seconds` (see above)."""
    return run_fleet(robots, seconds, LIDAR_MODEL)
