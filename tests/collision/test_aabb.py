import numpy as np
import pybullet as pb
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim.collision import world_aabbs
from fleetsim.geometry import quat

from ..conftest import make_sim, spawn_box


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_world_aabbs_of_rotated_boxes_match_pybullet(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 20
    half = rng.uniform(0.05, 1.0, size=(n, 3))
    pos = rng.uniform(-10, 10, size=(n, 3))
    orn = quat.normalize(rng.normal(size=(n, 4)))
    lo, hi = world_aabbs(pos, orn, -half, half)
    c = pb.connect(pb.DIRECT)
    try:
        for i in range(n):
            col = pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=half[i].tolist(), physicsClientId=c
            )
            body = pb.createMultiBody(
                0, col, -1, pos[i].tolist(), orn[i].tolist(), physicsClientId=c
            )
            plo, phi = pb.getAABB(body, physicsClientId=c)
            np.testing.assert_allclose(lo[i], plo, atol=1e-4)
            np.testing.assert_allclose(hi[i], phi, atol=1e-4)
    finally:
        pb.disconnect(physicsClientId=c)


def test_step_refreshes_only_moved_rows() -> None:
    with make_sim() as sim:
        boxes = [spawn_box(sim, (i * 3.0, 0, 0.5)) for i in range(3)]
        sim.step_once()
        table = sim.world.bodies
        assert not table["moved"].any()
        row = table.row(boxes[1].handle)
        np.testing.assert_allclose(table["aabb_min"][row], (2.75, -0.25, 0.25))
        sim.register_callback(lambda s, dt: boxes[1].set_pose_raw((10, 10, 1)))
        sim.step_once()
        np.testing.assert_allclose(table["aabb_min"][row], (9.75, 9.75, 0.75))
        np.testing.assert_allclose(
            table["aabb_max"][table.row(boxes[0].handle)], (0.25, 0.25, 0.75)
        )
