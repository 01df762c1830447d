from pathlib import Path

import numpy as np
import pybullet as pb
import pybullet_data
import pytest

from fleetsim import AssetNotFoundError, BackendError, ShapeParams, SimulationClosedError
from fleetsim.backend import Backend

R2D2 = str(Path(pybullet_data.getDataPath()) / "r2d2.urdf")


@pytest.fixture
def backend() -> Backend:
    b = Backend()
    yield b
    b.close()


def test_two_clients_are_independent() -> None:
    a, b = Backend(), Backend()
    try:
        assert a.client != b.client
        a.load_floor()
        body = a.create_body(ShapeParams(), ShapeParams(), 0.0, (1, 2, 3), (0, 0, 0, 1))
        assert a.num_bodies() == 2
        assert b.num_bodies() == 0
        assert a.has_body(body) and not b.has_body(body)
    finally:
        a.close()
        b.close()


def test_shapes_are_cached_per_client_and_cleared_on_reset(backend: Backend) -> None:
    red = ShapeParams(rgba_color=(1, 0, 0, 1))
    blue = ShapeParams(rgba_color=(0, 0, 1, 1))
    assert backend.shapes.collision(red) == backend.shapes.collision(blue)  # colour is visual only
    assert backend.shapes.visual(red) != backend.shapes.visual(blue)
    assert len(backend.shapes) == 3
    backend.reset()
    assert len(backend.shapes) == 0
    body = backend.create_body(red, red, 0.0, (0, 0, 0), (0, 0, 0, 1))
    assert pb.getCollisionShapeData(body, -1, physicsClientId=backend.client)


def test_push_and_read_poses_round_trip(backend: Backend) -> None:
    ids = np.array(
        [backend.create_body(ShapeParams(), None, 0.0, (i, 0, 0), (0, 0, 0, 1)) for i in range(5)]
    )
    rng = np.random.default_rng(1)
    pos = rng.normal(size=(5, 3))
    orn = rng.normal(size=(5, 4))
    orn /= np.linalg.norm(orn, axis=1, keepdims=True)
    backend.push_poses(ids, pos, orn)
    got_pos, got_orn = backend.read_poses(ids)
    np.testing.assert_allclose(got_pos, pos, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(got_orn * orn, axis=1)), 1.0, atol=1e-6)


def test_local_aabb_is_in_the_body_frame_and_restores_pose(backend: Backend) -> None:
    body = backend.load_urdf(R2D2, (5, 5, 1), (0, 0, 0.7071, 0.7071), False)
    before = pb.getBasePositionAndOrientation(body, physicsClientId=backend.client)
    lo, hi = backend.local_aabb(body)
    assert np.all(lo < 0) and np.all(hi > 0)  # around the base origin, not at (5, 5, 1)
    after = pb.getBasePositionAndOrientation(body, physicsClientId=backend.client)
    np.testing.assert_allclose(before[0], after[0])


def test_errors(backend: Backend) -> None:
    with pytest.raises(AssetNotFoundError, match=r"URDF file not found: /no/such\.urdf"):
        backend.load_urdf("/no/such.urdf", (0, 0, 0), (0, 0, 0, 1), False)
    with pytest.raises(BackendError, match="could not load"):
        backend.load_urdf("/no/such.sdf", (0, 0, 0), (0, 0, 0, 1), False)
    backend.close()
    backend.close()  # idempotent
    with pytest.raises(SimulationClosedError):
        _ = backend.client
