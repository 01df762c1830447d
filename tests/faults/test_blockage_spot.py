"""Where a blocked lane's box goes: on the lane's middle half, at the point farthest from every
other lane, and no bigger than leaves a robot room to drive the other lanes (it blocks this
lane only). Oracles: distances worked out here from the lane geometry, not the module's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import Agent, Pose
from fleetsim.faults.blockage import CLEAR_M, HALF_SIZE, LaneBlockage
from fleetsim.site import Site

from ..conftest import make_sim


def corners(middle: np.ndarray, half: tuple[float, ...], yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    local = np.array([[sx * half[0], sy * half[1]] for sx in (-1, 1) for sy in (-1, 1)])
    return middle + local @ np.array([[c, s], [-s, c]])


def gap_to_segment(p: np.ndarray, a: tuple[float, float], b: tuple[float, float]) -> float:
    a_, b_ = np.array(a, float), np.array(b, float)
    t = float(np.clip((p - a_) @ (b_ - a_) / ((b_ - a_) @ (b_ - a_)), 0, 1))
    return float(np.hypot(*(p - (a_ + t * (b_ - a_)))))


def blockage(other: tuple[tuple[float, float], tuple[float, float]]) -> tuple[LaneBlockage, float]:
    """The lane (0, 0) -> (10, 0) blocked, beside another lane `other`."""
    nodes = [
        {"name": "a", "x": 0, "y": 0},
        {"name": "b", "x": 10, "y": 0},
        {"name": "c", "x": other[0][0], "y": other[0][1]},
        {"name": "d", "x": other[1][0], "y": other[1][1]},
        {"name": "far", "x": 0, "y": 30},
    ]
    lanes = [{"from": "a", "to": "b"}, {"from": "c", "to": "d"}, {"from": "c", "to": "far"}]
    with make_sim(timestep=0.1) as sim:
        site = Site.from_graph(nodes, lanes)
        sim.set_site(site)
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 30, 0), sim_core=sim)
        g = site.graph
        block = LaneBlockage(sim, g, g.node("a"), g.node("b"), [robot], "box")
        return block, block.radius


def test_the_box_goes_where_the_lane_is_farthest_from_the_others() -> None:
    # another lane near the lane's first half only: the farthest point of the middle half is
    # its far end, x = 7.5
    block, _radius = blockage(((0.0, 2.0), (3.0, 2.0)))
    assert block.middle == pytest.approx((7.5, 0.0), abs=1e-6)
    assert block.half_size == pytest.approx(HALF_SIZE)  # room enough: full size
    # the other lane near the second half: the box goes to x = 2.5
    block, _ = blockage(((7.0, 2.0), (10.0, 2.0)))
    assert block.middle == pytest.approx((2.5, 0.0), abs=1e-6)


def test_the_box_is_no_bigger_than_leaves_a_robot_room_on_the_other_lanes() -> None:
    block, radius = blockage(((0.0, 0.8), (10.0, 0.8)))  # a lane alongside, 0.8 m away
    assert block.half_size[0] < HALF_SIZE[0] and block.half_size[1] < HALF_SIZE[1]
    box = corners(block.middle, block.half_size, block.yaw)
    room = min(gap_to_segment(p, (0.0, 0.8), (10.0, 0.8)) for p in box)
    assert room >= radius + CLEAR_M - 1e-6  # a robot on the other lane passes it
    allowed = 0.8 - radius - CLEAR_M  # the widest half-width that leaves that room
    assert block.half_size[1] >= 0.5 * min(allowed, HALF_SIZE[1])  # not shrunk to nothing
