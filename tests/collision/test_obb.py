import numpy as np
import pybullet as pb
import pytest

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


def _scene(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """n bodies near each other: a third unturned, a third turned about the vertical only
    (robots on a floor), a third tilted; local boxes off-centre; pairs of every mix."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.5, 1.5, (n, 3)) * [1, 1, 0.3]
    q = np.zeros((n, 4))
    q[:, 3] = 1.0
    kind = np.arange(n) % 3
    q[kind == 1] = quat.from_yaw(rng.uniform(-np.pi, np.pi, (kind == 1).sum()))
    q[kind == 2] = quat.normalize(rng.normal(size=((kind == 2).sum(), 4)))
    lo = -rng.uniform(0.1, 0.7, (n, 3)) + rng.normal(size=(n, 3)) * 0.1
    hi = lo + rng.uniform(0.2, 1.2, (n, 3))
    i, j = np.triu_indices(n, 1)
    return i, j, pos, q, lo, hi


def test_the_compiled_box_pairs_give_numpys_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every mix of unturned, level-turned and tilted boxes: the compiled narrow phase and the
    NumPy one agree on every pair, and both answer like the 15-axis test, whether a body's
    plane box comes from the compiled refresh (`level_kind`, `level_box`), from its columns,
    or some from each."""
    pytest.importorskip("numba")
    from fleetsim.collision import box_pairs, kernels

    i, j, pos, q, lo, hi = _scene(240, 5)
    boxes = np.ones(len(pos), dtype=bool)
    normal = np.zeros(len(pos), dtype=np.int8)  # (every body a box in 3-D)
    kind, plane = np.full(len(pos), -1, dtype=np.int8), np.full((len(pos), 8), np.nan)
    moved, unchecked = np.ones(len(pos), dtype=bool), np.zeros(len(pos), dtype=bool)
    world = np.empty((len(pos), 3)), np.empty((len(pos), 3))
    refreshed = np.arange(len(pos))[np.arange(len(pos)) % 5 != 0]  # a fifth never refreshed
    assert kernels.refresh_boxes(refreshed, pos, q, lo, hi, *world, moved, unchecked, kind, plane)
    assert np.array_equal(kind[refreshed], np.arange(len(pos))[refreshed] % 3)  # _scene's kinds
    args = (normal, boxes, boxes, pos, q, lo, hi, 0.05)
    verdict = box_pairs.classify_pairs(i, j, *args, kind, plane)
    fast = verdict == box_pairs.TOUCHING
    assert np.isin(verdict, (box_pairs.TOUCHING, box_pairs.SEPARATE)).all()
    assert np.array_equal(box_pairs.classify_pairs(i, j, *args), verdict)  # from the columns
    monkeypatch.setattr(box_pairs, "MIN_ROWS", 10**9)
    slow = box_pairs.classify_pairs(i, j, *args)
    assert np.array_equal(verdict, slow)
    turned = (q[i, :3] != 0).any(axis=1) | (q[j, :3] != 0).any(axis=1)
    box_i, box_j = box_pairs._box(i, pos, q, lo, hi, 0.05), box_pairs._box(j, pos, q, lo, hi, 0.05)
    sat = boxes_touch(*box_i, *box_j)
    assert np.array_equal(fast[turned], sat[turned])
    assert 0.1 < fast[turned].mean() < 0.9 and turned.sum() > 20_000


def test_the_touching_pairs_are_picked_in_one_pass_unless_one_is_for_pybullet() -> None:
    """`touching_only`: the TOUCHING pairs in order, as NumPy selects them; None when any pair
    is for PyBullet (the caller asks it) or the pairs are too few for the kernel."""
    pytest.importorskip("numba")
    from fleetsim.collision import box_pairs

    rng = np.random.default_rng(8)
    i, j = rng.integers(0, 500, 3000), rng.integers(500, 1000, 3000)
    verdict = rng.choice([box_pairs.TOUCHING, box_pairs.SEPARATE], 3000).astype(np.int8)
    found = box_pairs.touching_only(i, j, verdict)
    keep = verdict == box_pairs.TOUCHING
    assert found is not None and 1000 < len(found[0]) < 2000
    assert np.array_equal(found[0], i[keep]) and np.array_equal(found[1], j[keep])
    verdict[2999] = box_pairs.ASK
    assert box_pairs.touching_only(i, j, verdict) is None
    assert box_pairs.touching_only(i[:3], j[:3], verdict[:3]) is None  # (NumPy's job)


def test_level_turned_boxes_agree_with_pybullet_and_touch_at_contact() -> None:
    """Boxes turned about the vertical only (the planar test): PyBullet's distance query
    agrees away from contact, and two boxes set exactly face to face, at any yaw, touch; moved
    apart by a millimetre, they do not."""
    from fleetsim.collision.box_pairs import _pairs_numpy

    rng = np.random.default_rng(3)
    n = 300
    pos = rng.uniform(-0.8, 0.8, (2 * n, 3)) * [1, 1, 0.2]
    q = quat.from_yaw(rng.uniform(-np.pi, np.pi, 2 * n))
    half = rng.uniform(0.05, 0.5, (2 * n, 3))
    i, j = np.arange(n), np.arange(n, 2 * n)
    ours = _pairs_numpy(i, j, pos, q, -half, half, 0.0)
    c = pb.connect(pb.DIRECT)
    try:
        checked = 0
        for k in range(n):
            bodies = [
                pb.createMultiBody(
                    0,
                    pb.createCollisionShape(
                        pb.GEOM_BOX, halfExtents=half[r].tolist(), physicsClientId=c
                    ),
                    -1,
                    pos[r].tolist(),
                    q[r].tolist(),
                    physicsClientId=c,
                )
                for r in (i[k], j[k])
            ]
            points = pb.getClosestPoints(*bodies, 0.01, physicsClientId=c)
            distance = min((p[8] for p in points), default=1.0)
            if abs(distance) > 1e-3:
                assert ours[k] == (distance < 0), (k, distance)
                checked += 1
            for body in bodies:
                pb.removeBody(body, physicsClientId=c)
        assert checked > 0.95 * n and 0.2 < ours.mean() < 0.8
    finally:
        pb.disconnect(physicsClientId=c)
    # Face to face along a's x axis, b turned like a: touching, and 1 mm apart not.
    yaw = rng.uniform(-np.pi, np.pi, 50)
    axis = np.column_stack((np.cos(yaw), np.sin(yaw), np.zeros(50)))
    ha, hb = rng.uniform(0.1, 0.5, (50, 3)), rng.uniform(0.1, 0.5, (50, 3))
    for gap, touching in ((0.0, True), (1e-3, False)):
        centre_b = axis * (ha[:, :1] + hb[:, :1] + gap)
        pos = np.concatenate((np.zeros((50, 3)), centre_b))
        q = quat.from_yaw(np.concatenate((yaw, yaw)))
        lo, hi = np.concatenate((-ha, -hb)), np.concatenate((ha, hb))
        answer = _pairs_numpy(np.arange(50), np.arange(50, 100), pos, q, lo, hi, 0.0)
        assert answer.all() if touching else not answer.any()
