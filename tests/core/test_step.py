import numpy as np
import pybullet as pb
import pytest

from fleetsim import PROFILE_KEYS, ConfigError, MultiRobotSimulationCore, ObjectRemovedError, Pose

from ..conftest import make_sim, spawn_box


def test_profiling_keys_and_values(sim: MultiRobotSimulationCore) -> None:
    spawn_box(sim)
    stats = sim.step_once(return_profiling=True)
    assert stats is not None and set(stats) == set(PROFILE_KEYS)
    assert all(v >= 0 for v in stats.values())
    assert stats["total"] >= stats["phase1_update"] >= stats["agent_update"]
    assert sim.step_once() is None
    mean = sim.get_profiling_stats()
    assert set(mean) == set(PROFILE_KEYS) and mean["total"] > 0


def test_a_10hz_callback_runs_10_times_per_simulated_second(sim: MultiRobotSimulationCore) -> None:
    times: list[float] = []
    dts: list[float] = []

    def cb(s: MultiRobotSimulationCore, dt: float) -> None:
        times.append(s.sim_time)
        dts.append(dt)

    sim.register_callback(cb, frequency=10)
    for _ in range(100):
        sim.step_once()
    assert len(times) == 10
    assert np.allclose(np.diff(times), 0.1) and np.allclose(dts, 0.1)
    for _ in range(100):
        sim.step_once()
    assert len(times) == 20


def test_every_step_callbacks_and_unregister(sim: MultiRobotSimulationCore) -> None:
    calls = []
    cid = sim.register_callback(lambda s, dt: calls.append(dt))
    sim.step_once()
    sim.step_once()
    sim.unregister_callback(cid)
    sim.step_once()
    assert calls == [0.01, 0.01]
    with pytest.raises(ConfigError, match="frequency"):
        sim.register_callback(lambda s, dt: None, frequency=0)


def test_events_in_order(sim: MultiRobotSimulationCore) -> None:
    log: list[str] = []
    sim.on("pre_step", lambda s, dt: log.append("pre"))
    sim.register_callback(lambda s, dt: log.append("callback"))
    sim.on("post_step", lambda s, dt: log.append("post"))
    sim.on("object_spawned", lambda obj: log.append(f"spawned {obj.name}"))
    spawn_box(sim, name="crate")
    sim.step_once()
    assert log == ["spawned crate", "pre", "callback", "post"]
    with pytest.raises(ConfigError, match=r"unknown event 'pre_stpe'.*did you mean 'pre_step'"):
        sim.on("pre_stpe", print)


def test_set_poses_and_get_poses_for_arrays(any_sync_sim: MultiRobotSimulationCore) -> None:
    sim = any_sync_sim
    boxes = [spawn_box(sim, (i, 0, 0.5)) for i in range(20)]
    handles = sim.handles_of(boxes)
    rng = np.random.default_rng(0)
    pos = rng.uniform(-5, 5, (20, 3))
    sim.set_poses(handles, pos)  # outside a step: immediate
    got, orn = sim.get_poses(boxes)
    np.testing.assert_allclose(got, pos)
    np.testing.assert_allclose(orn, np.tile([0, 0, 0, 1.0], (20, 1)))
    raw = [
        pb.getBasePositionAndOrientation(b.object_id, physicsClientId=sim.client)[0] for b in boxes
    ]
    np.testing.assert_allclose(raw, pos, atol=1e-6)

    yaw_quats = np.tile([0, 0, np.sin(0.25), np.cos(0.25)], (20, 1))
    sim.register_callback(lambda s, dt: s.set_poses(handles, pos + 1, yaw_quats * 3))  # normalised
    sim.step_once()
    np.testing.assert_allclose(sim.get_poses(handles)[1], yaw_quats)
    assert boxes[3].get_pose().isclose(Pose.from_yaw(*(pos[3] + 1), 0.5))


@pytest.mark.parametrize(
    ("positions", "orientations", "match"),
    [
        (np.zeros((3, 3)), None, r"positions must have shape \(2, 3\)"),
        (np.full((2, 3), np.nan), None, "finite"),
        (np.zeros((2, 3)), np.zeros((2, 4)), "non-zero quaternions"),
        (np.zeros((2, 3)), np.zeros((2, 3)), r"orientations must have shape \(2, 4\)"),
    ],
)
def test_set_poses_rejects_bad_arrays_and_changes_nothing(
    sim: MultiRobotSimulationCore,
    positions: np.ndarray,
    orientations: np.ndarray | None,
    match: str,
) -> None:
    boxes = [spawn_box(sim, (i, 0, 0.5)) for i in range(2)]
    with pytest.raises(ConfigError, match=match):
        sim.set_poses(boxes, positions, orientations)
    assert [b.get_pose().position for b in boxes] == [(0, 0, 0.5), (1, 0, 0.5)]


def test_get_poses_of_removed_body_fails(sim: MultiRobotSimulationCore) -> None:
    a, b = spawn_box(sim), spawn_box(sim)
    handles = sim.handles_of([a, b])
    a.remove()
    with pytest.raises(ObjectRemovedError):
        sim.get_poses(handles)


def test_physics_moves_bodies_with_mass() -> None:
    with make_sim(physics=True, timestep=1 / 240) as sim:
        ball = spawn_box(sim, (0, 0, 2.0), half=0.1, mass=1.0)
        fixed = spawn_box(sim, (2, 0, 2.0), half=0.1)
        for _ in range(240):
            sim.step_once()
        assert ball.get_pose().z == pytest.approx(0.1, abs=0.02)  # fell onto the floor
        assert fixed.get_pose().z == 2.0  # kinematic: stays


def test_register_static_body(sim: MultiRobotSimulationCore) -> None:
    col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[1, 2, 3], physicsClientId=sim.client)
    body = pb.createMultiBody(0, col, -1, [5, 0, 3], physicsClientId=sim.client)
    rack = sim.register_static_body(body)
    assert rack.collision_mode.name == "STATIC" and body in sim.static_body_ids
    assert sim.register_static_body(body) is rack
    sim.step_once()
    row = sim.world.bodies.row(rack.handle)
    np.testing.assert_allclose(sim.world.bodies["aabb_min"][row], (4, -2, 0), atol=1e-5)
    with pytest.raises(ConfigError, match="no PyBullet body 999"):
        sim.register_static_body(999)
