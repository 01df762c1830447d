"""Near misses against a turned structure box: the margin is measured to the box as it
stands (turned), not to its axis-aligned bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim.fleet.near_miss import NearMisses
from fleetsim.site import Obstacles


def test_the_near_miss_margin_of_a_turned_box() -> None:
    # a wall 2 m long and 0.2 m thin, turned 45 degrees
    wall = Obstacles(
        centres=np.array([[0.0, 0.0, 0.5]]),
        half_extents=np.array([[1.0, 0.1, 0.5]]),
        yaws=np.array([math.pi / 4]),
    )
    normal = np.array([-math.sin(math.pi / 4), math.cos(math.pi / 4)])  # across the wall
    near = normal * (0.1 + 0.3 + 0.15)  # a robot (radius 0.3) 0.15 m from the wall's face
    clear = np.array([1.0, 0.0])  # inside the axis-aligned bounds, 0.31 m from the turned wall
    watch = NearMisses(["near", "clear"], radius=0.3, gap=0.2, obstacles=wall)
    _, (robots, boxes, dist) = watch.close(np.array([near, clear]))
    assert robots.tolist() == [0] and boxes.tolist() == [0]
    assert dist[0] - 0.3 == pytest.approx(0.15, abs=1e-9)
    watch.check(1.0, np.array([near, clear]))
    (record,) = watch.records
    assert record["kind"] == "robot-structure" and record["a"] == "near"
    assert record["gap_m"] == pytest.approx(0.15, abs=1e-9)
