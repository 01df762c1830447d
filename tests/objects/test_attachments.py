import math

import numpy as np
import pybullet as pb
import pytest

from fleetsim import ConfigError, MultiRobotSimulationCore, Pose

from ..conftest import make_sim, spawn_box


def drive(sim: MultiRobotSimulationCore, obj: object, vx: float) -> None:
    def cb(s: MultiRobotSimulationCore, dt: float) -> None:
        p = obj.get_pose()  # type: ignore[attr-defined]
        obj.set_pose(Pose.from_yaw(p.x + vx * dt, p.y, p.z, p.yaw + 0.5 * dt))  # type: ignore[attr-defined]

    sim.register_callback(cb)


def test_children_follow_their_parent_every_step(any_sync_sim: MultiRobotSimulationCore) -> None:
    sim = any_sync_sim
    robot = spawn_box(sim, (0, 0, 0.25))
    crate = spawn_box(sim, (0, 0, 0.75), half=0.1)
    label = spawn_box(sim, (0, 0, 1.0), half=0.05)
    robot.attach_object(crate)  # keeps its current relative pose
    crate.attach_object(label, Pose.from_xyz(0, 0, 0.2))
    assert crate.is_attached() and crate.attached_to is robot
    assert robot.get_attached_objects() == [crate] and not robot.is_attached()
    drive(sim, robot, vx=1.0)
    for _ in range(100):
        sim.step_once()
        r = robot.get_pose()
        assert crate.get_pose().isclose(
            r.compose(Pose.from_xyz(0, 0, 0.5)), pos_tol=1e-9, angle_tol=1e-9
        )
        assert label.get_pose().isclose(
            r.compose(Pose.from_xyz(0, 0, 0.7)), pos_tol=1e-9, angle_tol=1e-9
        )
    assert robot.get_pose().x == pytest.approx(1.0)
    sim.sync()
    raw = pb.getBasePositionAndOrientation(label.object_id, physicsClientId=sim.client)[0]
    np.testing.assert_allclose(raw, label.get_pose().position, atol=1e-6)


def test_detached_children_stay_where_they_were_put(sim: MultiRobotSimulationCore) -> None:
    robot = spawn_box(sim, (0, 0, 0.25))
    crate = spawn_box(sim, (0, 0, 0.75), half=0.1)
    robot.attach_object(crate)
    drive(sim, robot, vx=2.0)
    for _ in range(50):
        sim.step_once()
    robot.detach_object(crate)
    dropped = crate.get_pose()
    for _ in range(50):
        sim.step_once()
    assert crate.get_pose() == dropped
    assert not crate.is_attached() and robot.get_attached_objects() == []
    assert robot.get_pose().x == pytest.approx(2.0)


def test_outside_a_step_children_move_at_once(sim: MultiRobotSimulationCore) -> None:
    robot = spawn_box(sim, (0, 0, 0.25))
    crate = spawn_box(sim, (5, 5, 5), half=0.1)
    robot.attach_object(crate, Pose.from_xyz(0, 0, 0.5))
    assert crate.get_pose().position == (0, 0, 0.75)  # snapped to the attach pose
    robot.set_pose(Pose.from_yaw(1, 0, 0.25, math.pi / 2))
    expected = (1, 0, 0.75)
    assert crate.get_pose().position == pytest.approx(expected)
    raw = pb.getBasePositionAndOrientation(crate.object_id, physicsClientId=sim.client)[0]
    np.testing.assert_allclose(raw, expected, atol=1e-6)


def test_bad_attachments(sim: MultiRobotSimulationCore) -> None:
    a, b, c = spawn_box(sim), spawn_box(sim), spawn_box(sim)
    a.attach_object(b)
    b.attach_object(c)
    with pytest.raises(ConfigError, match="itself"):
        a.attach_object(a)
    with pytest.raises(ConfigError, match="already attached"):
        c.attach_object(b)
    with pytest.raises(ConfigError, match="cycle"):
        c.attach_object(a)
    with pytest.raises(ConfigError, match="not attached to this parent"):
        c.detach_object(a)


def test_removing_a_parent_leaves_children_in_place(sim: MultiRobotSimulationCore) -> None:
    robot, crate = spawn_box(sim, (0, 0, 0.25)), spawn_box(sim, (0, 0, 1))
    robot.attach_object(crate)
    robot.remove()
    assert not crate.is_attached()
    assert crate.get_pose().position == (0, 0, 1)


def test_with_physics_a_child_with_mass_is_held_by_a_constraint() -> None:
    with make_sim(physics=True, timestep=1 / 240) as sim:
        carrier = spawn_box(sim, (0, 0, 1.0))  # kinematic (mass 0) platform in the air
        load = spawn_box(sim, (1, 0, 1.5), half=0.1, mass=1.0)  # beside it, not on it
        carrier.attach_object(load)
        assert pb.getNumConstraints(physicsClientId=sim.client) == 1
        for _ in range(240):
            sim.step_once()
        assert load.get_pose().z == pytest.approx(1.5, abs=0.02)  # held, not fallen
        carrier.detach_object(load)
        assert pb.getNumConstraints(physicsClientId=sim.client) == 0
        for _ in range(240):
            sim.step_once()
        assert load.get_pose().z < 1.3  # gravity takes it once detached
