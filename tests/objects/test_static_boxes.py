"""`SimObject.static_boxes`: many static boxes in batched PyBullet calls (a site's walls and
blocked cells), each a normal body: its pose, its box, collisions, removal."""

from __future__ import annotations

import math

import numpy as np
import pybullet as pb
import pytest

from fleetsim import ConfigError, MultiRobotSimulationCore, Pose, SimObject
from fleetsim.geometry import ShapeParams
from fleetsim.objects import SimObjectSpawnParams
from fleetsim.state import CollisionMode

from ..conftest import make_sim


def test_boxes_are_where_they_should_be_in_pybullet(sim: MultiRobotSimulationCore) -> None:
    centres = [[0, 0, 0.5], [3, 0, 0.5], [0, 4, 1.0], [6, 6, 0.5]]
    halves = [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [2.0, 0.05, 1.0], [0.5, 0.5, 0.5]]
    yaws = [0.0, 0.0, math.pi / 4, 0.0]
    before = pb.getNumBodies(physicsClientId=sim.client)  # the floor
    boxes = SimObject.static_boxes(centres, halves, yaws, sim_core=sim)
    assert len(boxes) == 4 and len({b.object_id for b in boxes}) == 4
    for box, centre, half, yaw in zip(boxes, centres, halves, yaws, strict=True):
        pos, orn = pb.getBasePositionAndOrientation(box.object_id, physicsClientId=sim.client)
        assert pos == pytest.approx(centre) and box.get_pose().yaw == pytest.approx(yaw)
        assert pb.getEulerFromQuaternion(orn, physicsClientId=sim.client)[2] == pytest.approx(yaw)
        lo, hi = pb.getAABB(box.object_id, physicsClientId=sim.client)
        if yaw == 0.0:  # PyBullet's own box is the size asked for (plus its small margin)
            assert np.subtract(hi, lo) == pytest.approx(np.multiply(half, 2), abs=0.05)
        assert box.collision_mode is CollisionMode.STATIC and not box.pickable
    # PyBullet's client knows every body of the batch (getBodyInfo would fail on the others).
    assert pb.getNumBodies(physicsClientId=sim.client) == before + 4
    assert pb.getBodyInfo(boxes[1].object_id, physicsClientId=sim.client)[0] == b"link0"


def test_boxes_collide_and_can_be_removed(sim: MultiRobotSimulationCore) -> None:
    (wall,) = SimObject.static_boxes([[2, 0, 0.5]], [[0.5, 0.5, 0.5]], [0.0], sim_core=sim)

    cube = SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=ShapeParams("box", half_extents=(0.2, 0.2, 0.2)),
            initial_pose=Pose.from_xyz(0, 0, 0.5),
        ),
        sim_core=sim,
    )
    sim.step_once()
    assert sim.collision_count == 0
    cube.set_pose(Pose.from_xyz(1.4, 0, 0.5))  # overlaps the wall by 0.1 m
    sim.step_once()
    assert {frozenset(p) for p in sim.get_active_collision_pairs()} == {
        frozenset((cube.object_id, wall.object_id))
    }
    wall.remove()
    sim.step_once()
    assert sim.get_active_collision_pairs() == []


def test_bad_boxes_change_nothing(sim: MultiRobotSimulationCore) -> None:
    before = len(sim.sim_objects)
    with pytest.raises(ConfigError, match=r"centres \(K, 3\).*got \(2, 2\)"):
        SimObject.static_boxes([[0, 0], [1, 1]], [[1, 1, 1]] * 2, [0, 0], sim_core=sim)
    with pytest.raises(ConfigError, match="half extents > 0"):
        SimObject.static_boxes([[0, 0, 0]], [[0, 1, 1]], [0], sim_core=sim)
    with pytest.raises(ConfigError, match="finite"):
        SimObject.static_boxes([[0, 0, math.nan]], [[1, 1, 1]], [0], sim_core=sim)
    assert len(sim.sim_objects) == before and SimObject.static_boxes([], [], [], sim) == []


def test_many_boxes_in_two_simulations() -> None:
    rng = np.random.default_rng(0)
    centres = np.column_stack((rng.uniform(0, 500, 2000), rng.uniform(0, 500, 2000), np.ones(2000)))
    halves = np.column_stack((rng.integers(1, 4, 2000) / 2, np.full(2000, 0.5), np.ones(2000)))
    with make_sim() as a, make_sim() as b:
        boxes = SimObject.static_boxes(centres, halves, np.zeros(2000), sim_core=a)
        SimObject.static_boxes(centres[:10], halves[:10], np.zeros(10), sim_core=b)
        assert len(a.sim_objects) == 2000 and len(b.sim_objects) == 10
        ids = {box.object_id for box in boxes}
        assert all(pb.getBodyInfo(i, physicsClientId=a.client) for i in ids) and len(ids) == 2000
        got = np.array([box.get_pose().position for box in boxes])
        assert got == pytest.approx(centres)
        a.reset()
        assert a.sim_objects == [] and len(b.sim_objects) == 10
