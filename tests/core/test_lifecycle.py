from pathlib import Path

import pybullet as pb
import pytest

from fleetsim import Pose, SimObject, SimulationClosedError

from ..conftest import make_sim, spawn_box


def mesh_file_of(sim: object, obj: SimObject) -> str:
    data = pb.getVisualShapeData(obj.object_id, physicsClientId=sim.client)  # type: ignore[attr-defined]
    return Path(data[0][4].decode()).name


def test_two_simulations_stay_independent_across_reset(cube_obj: Path) -> None:
    with make_sim() as a, make_sim(enable_floor=False) as b:
        assert a.client != b.client
        box_a = spawn_box(a, (1, 0, 0.5))
        box_b = spawn_box(b, (2, 0, 0.5))
        mesh_a = SimObject.from_mesh(str(cube_obj), Pose.from_xyz(0, 3, 1), sim_core=a)
        SimObject.from_mesh(str(cube_obj), Pose.from_xyz(0, 4, 1), sim_core=b)
        a.register_callback(lambda s, dt: box_a.set_pose_raw((box_a.get_pose().x + 0.01, 0, 0.5)))
        for _ in range(10):
            a.step_once()
        assert box_a.get_pose().x == pytest.approx(1.1) and box_b.get_pose().x == 2.0
        assert b.step_count == 0 and a.step_count == 10
        assert mesh_file_of(a, mesh_a) == "cube.obj"

        a.reset()  # PyBullet drops a's shapes; b's must be untouched and a must rebuild its own
        mesh_a2 = SimObject.from_mesh(str(cube_obj), Pose.from_xyz(0, 3, 1), sim_core=a)
        mesh_b2 = SimObject.from_mesh(str(cube_obj), Pose.from_xyz(0, 5, 1), sim_core=b)
        assert mesh_file_of(a, mesh_a2) == "cube.obj" and mesh_file_of(b, mesh_b2) == "cube.obj"
        assert pb.getCollisionShapeData(mesh_a2.object_id, -1, physicsClientId=a.client)
        assert pb.getNumBodies(physicsClientId=a.client) == 2  # floor + new mesh
        assert pb.getNumBodies(physicsClientId=b.client) == 3  # b untouched
        assert box_b.get_pose().x == 2.0


def test_reset_starts_over() -> None:
    with make_sim(seed=7) as sim:
        draws = sim.rng.random(3)
        box = spawn_box(sim)
        calls = []
        sim.register_callback(lambda s, dt: calls.append(s.sim_time), frequency=10)
        box.register_callback(lambda o, dt: calls.append(-1.0))
        for _ in range(25):
            sim.step_once()
        sim.reset()
        assert (sim.sim_time, sim.step_count, sim.sim_objects) == (0.0, 0, [])
        assert box.is_removed
        assert sim.floor_id is not None and pb.getNumBodies(physicsClientId=sim.client) == 1
        assert list(sim.rng.random(3)) == list(draws)
        calls.clear()
        sim.step_once()
        assert calls == [0.0]  # the sim's callback survived and restarted; the box's went


def test_reset_without_floor() -> None:
    with make_sim(enable_floor=False) as sim:
        spawn_box(sim)
        sim.reset()
        assert sim.floor_id is None and pb.getNumBodies(physicsClientId=sim.client) == 0


def test_close_and_context_manager() -> None:
    sim = make_sim()
    client = sim.client
    sim.close()
    sim.close()
    assert sim.is_closed and not pb.isConnected(physicsClientId=client)
    with pytest.raises(SimulationClosedError, match="closed"):
        sim.step_once()
    with make_sim() as s2:
        pass
    assert s2.is_closed
