import numpy as np
import pybullet as pb

from fleetsim.collision.obb import boxes_touch
from fleetsim.geometry import quat


def test_box_box_agrees_with_pybullet_closest_points() -> None:
    """Random oriented boxes: our exact test equals PyBullet's distance query, except within a
    millimetre of touching, where PyBullet's float32 GJK is itself uncertain."""
    rng = np.random.default_rng(11)
    n = 400
    ca, cb = rng.uniform(-1, 1, (n, 3)), rng.uniform(-1, 1, (n, 3))
    qa, qb = quat.normalize(rng.normal(size=(n, 4))), quat.normalize(rng.normal(size=(n, 4)))
    ha, hb = rng.uniform(0.05, 0.6, (n, 3)), rng.uniform(0.05, 0.6, (n, 3))
    ours = boxes_touch(ca, quat.to_matrix(qa), ha, cb, quat.to_matrix(qb), hb)
    c = pb.connect(pb.DIRECT)
    try:
        checked = 0
        for k in range(n):
            bodies = [
                pb.createMultiBody(
                    0,
                    pb.createCollisionShape(pb.GEOM_BOX, halfExtents=h.tolist(), physicsClientId=c),
                    -1,
                    p.tolist(),
                    q.tolist(),
                    physicsClientId=c,
                )
                for h, p, q in ((ha[k], ca[k], qa[k]), (hb[k], cb[k], qb[k]))
            ]
            points = pb.getClosestPoints(*bodies, 0.01, physicsClientId=c)
            distance = min((p[8] for p in points), default=1.0)
            if abs(distance) > 1e-3:
                assert ours[k] == (distance < 0), (k, distance)
                checked += 1
            for body in bodies:
                pb.removeBody(body, physicsClientId=c)
        assert checked > 0.95 * n and 0.2 < ours.mean() < 0.8  # both outcomes well represented
    finally:
        pb.disconnect(physicsClientId=c)
