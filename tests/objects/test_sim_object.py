from pathlib import Path

import numpy as np
import pybullet as pb
import pytest

from fleetsim import (
    AssetNotFoundError,
    CollisionMode,
    ConfigError,
    MultiRobotSimulationCore,
    ObjectRemovedError,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
)

from ..conftest import make_sim, spawn_box


def raw_position(sim: MultiRobotSimulationCore, obj: SimObject) -> tuple[float, ...]:
    return tuple(
        round(v, 6)
        for v in pb.getBasePositionAndOrientation(obj.object_id, physicsClientId=sim.client)[0]
    )


@pytest.mark.parametrize(
    "shape",
    [
        ShapeParams("box", half_extents=(0.3, 0.2, 0.1)),
        ShapeParams("sphere", radius=0.4),
        ShapeParams("cylinder", radius=0.2, height=1.0, frame_orientation=(0.7071, 0, 0, 0.7071)),
    ],
)
def test_spawn_primitives(sim: MultiRobotSimulationCore, shape: ShapeParams) -> None:
    params = SimObjectSpawnParams(
        visual_shape=shape, initial_pose=Pose.from_xyz(1, 2, 3), name="thing", user_data={"k": 1}
    )
    obj = SimObject.from_params(params, sim_core=sim)
    assert obj.name == "thing" and obj.user_data == {"k": 1}
    assert obj.get_pose() == Pose.from_xyz(1, 2, 3)
    assert raw_position(sim, obj) == (1, 2, 3)
    assert pb.getCollisionShapeData(obj.object_id, -1, physicsClientId=sim.client)
    assert sim.get_object(obj.object_id) is obj
    assert obj in sim.sim_objects
    sim.step_once()
    lo = sim.world.bodies["aabb_min"][sim.world.bodies.row(obj.handle)]
    plo, _ = pb.getAABB(obj.object_id, physicsClientId=sim.client)
    np.testing.assert_allclose(lo, plo, atol=1e-4)


def test_from_mesh(sim: MultiRobotSimulationCore, cube_obj: Path) -> None:
    obj = SimObject.from_mesh(
        str(cube_obj), Pose.from_xyz(0, 0, 1), sim_core=sim, mesh_scale=(2, 2, 2), name="crate"
    )
    assert obj.name == "crate"
    visual = pb.getVisualShapeData(obj.object_id, physicsClientId=sim.client)
    assert visual and Path(visual[0][4].decode()).name == "cube.obj"
    row = sim.world.bodies.row(obj.handle)
    # The local box comes from PyBullet for meshes: a 2 m cube around the origin.
    assert np.all(sim.world.bodies["aabb_local_min"][row] <= -0.99)
    assert np.all(sim.world.bodies["aabb_local_max"][row] >= 0.99)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (
            lambda: ShapeParams("mesh", mesh_path="/missing/crate.obj"),
            AssetNotFoundError,
            "mesh file not found",
        ),
        (lambda: ShapeParams("capsule"), ConfigError, "unknown shape_type 'capsule'"),
        (lambda: SimObjectSpawnParams(), ConfigError, "needs visual_shape or collision_shape"),
        (
            lambda: SimObjectSpawnParams(visual_shape=ShapeParams(), mass=-1),
            ConfigError,
            "mass must be",
        ),
        (
            lambda: SimObjectSpawnParams(visual_shape=ShapeParams(), initial_pose=(0, 0, 0)),
            ConfigError,
            "Pose",
        ),
        (
            lambda: SimObjectSpawnParams(visual_shape=ShapeParams(), collision_mode="flying"),
            ConfigError,
            "NORMAL_3D",
        ),
    ],
)
def test_bad_parameters_fail_before_touching_the_world(
    sim: MultiRobotSimulationCore, build: object, error: type, match: str
) -> None:
    before = pb.getNumBodies(physicsClientId=sim.client)
    with pytest.raises(error, match=match):
        SimObject.from_params(build(), sim_core=sim)  # type: ignore[operator]
    assert pb.getNumBodies(physicsClientId=sim.client) == before
    assert sim.sim_objects == []


def test_failure_after_creation_removes_the_body(sim: MultiRobotSimulationCore) -> None:
    class Exploding(SimObject):
        def __init__(self, *args: object) -> None:
            raise RuntimeError("boom")

    before = pb.getNumBodies(physicsClientId=sim.client)
    with pytest.raises(RuntimeError, match="boom"):
        Exploding.from_params(SimObjectSpawnParams(visual_shape=ShapeParams()), sim_core=sim)
    assert pb.getNumBodies(physicsClientId=sim.client) == before
    assert sim.world.bodies.size == 0


def test_sim_core_is_required() -> None:
    with pytest.raises(ConfigError, match="sim_core=sim"):
        SimObject.from_params(SimObjectSpawnParams(visual_shape=ShapeParams()))


def test_set_pose_outside_a_step_is_immediate(any_sync_sim: MultiRobotSimulationCore) -> None:
    box = spawn_box(any_sync_sim)
    box.set_pose(Pose.from_xyz(3, 4, 5))
    assert raw_position(any_sync_sim, box) == (3, 4, 5)
    box.set_pose_raw((1, 1, 1))
    assert raw_position(any_sync_sim, box) == (1, 1, 1)
    assert box.get_pose().orientation == (0, 0, 0, 1)


def test_set_pose_inside_a_step_is_buffered() -> None:
    for sync in ("eager", "lazy"):
        with make_sim(pose_sync=sync) as sim:
            box = spawn_box(sim, (0, 0, 0.5))
            seen = {}

            def move(
                s: MultiRobotSimulationCore, dt: float, box: SimObject = box, seen: dict = seen
            ) -> None:
                box.set_pose(Pose.from_xyz(9, 9, 9))
                box.set_pose(Pose.from_xyz(5, 0, 0.5))  # last write wins
                seen["framework"] = box.get_pose().position
                seen["raw"] = raw_position(s, box)

            sim.register_callback(move)
            sim.step_once()
            assert seen == {"framework": (5, 0, 0.5), "raw": (0, 0, 0.5)}
            if sync == "eager":
                assert raw_position(sim, box) == (5, 0, 0.5)
            else:
                assert raw_position(sim, box) == (0, 0, 0.5)
                assert sim.sync() == 1
                assert raw_position(sim, box) == (5, 0, 0.5)
                assert sim.sync() == 0


def test_exception_in_callback_does_not_leave_the_step_open(sim: MultiRobotSimulationCore) -> None:
    box = spawn_box(sim)

    def bad(s: MultiRobotSimulationCore, dt: float) -> None:
        raise ValueError("user bug")

    cid = sim.register_callback(bad)
    with pytest.raises(ValueError, match="user bug"):
        sim.step_once()
    assert not sim.world.in_step
    sim.unregister_callback(cid)
    box.set_pose(Pose.from_xyz(7, 0, 0))  # immediate again: not stuck "in step"
    assert raw_position(sim, box) == (7, 0, 0)
    sim.step_once()
    assert sim.step_count == 2  # the raising step completed too (see tests/core/test_errors.py)


def test_collision_mode_and_flags(sim: MultiRobotSimulationCore) -> None:
    box = spawn_box(sim, collision_mode="normal_2d", mass=2.0, pickable=False)
    assert box.collision_mode is CollisionMode.NORMAL_2D
    assert box.mass == 2.0 and not box.pickable
    box.set_collision_mode(CollisionMode.DISABLED)
    assert box.collision_mode is CollisionMode.DISABLED
    box.pickable = True
    assert box.pickable


def test_removal(sim: MultiRobotSimulationCore) -> None:
    removed = []
    sim.on("object_removed", removed.append)
    a, b = spawn_box(sim, (0, 0, 0)), spawn_box(sim, (2, 0, 0))
    body_id = a.object_id
    a.remove()
    assert removed == [a] and a.is_removed and "removed" in repr(a)
    assert sim.get_object(body_id) is None
    with pytest.raises(pb.error):
        pb.getBasePositionAndOrientation(body_id, physicsClientId=sim.client)
    with pytest.raises(ObjectRemovedError):
        a.get_pose()
    assert b.get_pose() == Pose.from_xyz(2, 0, 0)  # the swapped row kept its identity
    assert sim.sim_objects == [b]


def test_object_callbacks_run_with_the_object_and_go_with_it(sim: MultiRobotSimulationCore) -> None:
    box = spawn_box(sim)
    calls: list[tuple[SimObject, float]] = []
    box.register_callback(lambda obj, dt: calls.append((obj, dt)), frequency=50)
    for _ in range(10):
        sim.step_once()
    assert len(calls) == 5 and calls[0][0] is box and calls[0][1] == pytest.approx(0.02)
    box.remove()
    sim.step_once()
    sim.step_once()
    assert len(calls) == 5
