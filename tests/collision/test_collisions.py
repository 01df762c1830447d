"""Collision checks on real scenes: broadphase against brute force, modes, narrow phases, events."""

import math
from typing import Any

import numpy as np
import pybullet as pb
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from fleetsim import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    CollisionMode,
    ConfigError,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
)
from fleetsim.collision import candidate_pairs
from fleetsim.collision.broadphase import overlapping
from fleetsim.collision.obb import boxes_touch
from fleetsim.geometry import quat

from ..conftest import make_sim
from .helpers import spawn

MODES = [
    CollisionMode.NORMAL_3D,
    CollisionMode.NORMAL_2D,
    CollisionMode.STATIC,
    CollisionMode.DISABLED,
]


def brute_force(sim: MultiRobotSimulationCore) -> list[tuple[int, int]]:
    """O(N^2) AABB test with the mode rules, from the world boxes in the body table."""
    b = sim.world.bodies
    lo, hi, mode, ids = b["aabb_min"], b["aabb_max"], b["collision_mode"], b["body_id"]
    pairs = []
    for i in range(len(b)):
        for j in range(i + 1, len(b)):
            mi, mj = CollisionMode(int(mode[i])), CollisionMode(int(mode[j]))
            if CollisionMode.DISABLED in (mi, mj) or mi == mj == CollisionMode.STATIC:
                continue
            axes = 2 if CollisionMode.NORMAL_2D in (mi, mj) else 3
            if np.all(lo[i, :axes] <= hi[j, :axes]) and np.all(lo[j, :axes] <= hi[i, :axes]):
                pairs.append((min(int(ids[i]), int(ids[j])), max(int(ids[i]), int(ids[j]))))
    return sorted(pairs)


shapes = st.one_of(
    st.builds(lambda h: ShapeParams("box", half_extents=h), st.tuples(*[st.floats(0.05, 1.5)] * 3)),
    st.builds(lambda r: ShapeParams("sphere", radius=r), st.floats(0.05, 1.0)),
    st.builds(
        lambda r, h: ShapeParams("cylinder", radius=r, height=h),
        st.floats(0.05, 1.0),
        st.floats(0.1, 2.0),
    ),
)
bodies = st.lists(
    st.tuples(
        shapes,
        st.tuples(st.floats(-6, 6), st.floats(-6, 6), st.floats(0, 2)),
        st.floats(-math.pi, math.pi),
        st.sampled_from(MODES),
    ),
    min_size=2,
    max_size=40,
)


@settings(max_examples=40, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(bodies, st.sampled_from(["auto_adaptive", "constant"]), st.booleans())
def test_broadphase_equals_brute_force(scene: list, cell_mode: str, small: bool) -> None:
    """The collision system's pairs, through the small-scene test or the index paths."""
    from fleetsim.collision import broadphase

    default = broadphase.SMALL_SCENE_PAIRS
    broadphase.SMALL_SCENE_PAIRS = default if small else 0
    try:
        check_against_brute_force(scene, cell_mode)
    finally:
        broadphase.SMALL_SCENE_PAIRS = default


def check_against_brute_force(scene: list, cell_mode: str) -> None:
    with make_sim(
        collision_narrowphase="aabb",
        spatial_hash_cell_size_mode=cell_mode,
        spatial_hash_cell_size=0.7,
    ) as sim:
        for shape, xyz, yaw, mode in scene:
            spawn(sim, shape, Pose.from_yaw(*xyz, yaw), mode)
        found = sim.check_collisions()
        assert found == brute_force(sim)
        ids = {
            int(i)
            for i, m in zip(
                sim.world.bodies["body_id"], sim.world.bodies["collision_mode"], strict=True
            )
            if m == 3
        }
        assert not any(a in ids or b in ids for a, b in found)  # DISABLED never appears


def test_large_bodies_and_many_cells_match_brute_force() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(2, 300))
        centre = rng.uniform(-50, 50, (n, 3))
        half = np.where(
            rng.random((n, 1)) < 0.05, rng.uniform(5, 40, (n, 3)), rng.uniform(0.1, 1.0, (n, 3))
        )
        lo, hi = centre - half, centre + half
        i, j = candidate_pairs(lo, hi, cell_size=float(rng.choice([0.3, 1.0, 4.0])))
        bi, bj = np.triu_indices(n, 1)
        keep = np.all((lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi]), axis=1)
        assert set(zip(i.tolist(), j.tolist(), strict=True)) == set(
            zip(bi[keep].tolist(), bj[keep].tolist(), strict=True)
        )


def test_small_scenes_pair_like_overlapping() -> None:
    """`small_scene_pairs` gives exactly the pairs `overlapping` keeps among every moving pair
    (once) and every moving-fixed pair: rows in neither set, 2-D rows, touching boxes, and
    boxes with NaN or infinite bounds (which `overlapping` keeps)."""
    from fleetsim.collision.broadphase import small_scene_pairs

    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(1, 120))
        centre = rng.uniform(-8, 8, (n, 3))
        half = rng.uniform(0.1, 1.5, (n, 3))
        if trial % 4 == 0:
            centre, half = np.round(centre), np.full((n, 3), 0.5)  # touching exactly
        lo, hi = centre - half, centre + half
        odd = rng.random(n) < 0.05
        lo[odd, 0], hi[odd, 1] = np.nan, np.inf
        role = rng.integers(0, 3, n)  # 0 moving, 1 fixed, 2 neither
        moving, fixed = np.flatnonzero(role == 0), np.flatnonzero(role == 1)
        flat = rng.random(n) < 0.2
        i, j = small_scene_pairs(lo, hi, moving, fixed, flat)
        mi, mj = np.triu_indices(moving.size, 1)
        ci = np.concatenate((moving[mi], np.repeat(moving, fixed.size)))
        cj = np.concatenate((moving[mj], np.tile(fixed, moving.size)))
        ei, ej = overlapping(lo, hi, ci, cj, flat)
        found = set(zip(i.tolist(), j.tolist(), strict=True))
        assert found == set(zip(ei.tolist(), ej.tolist(), strict=True)), trial
        assert len(found) == len(i)  # each pair once


@pytest.mark.parametrize("path", ["numba", "numpy", "sweep"])
def test_every_broadphase_equals_brute_force(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every broadphase (the Numba kernel for large fleets, the NumPy hash, the sweep for small
    fleets) gives exactly the brute-force pairs, sorted: crowds, sparse fleets, a few wide
    bodies, 2-D bodies, touching boxes."""
    from fleetsim.collision import broadphase, kernels

    if path == "numba":
        pytest.importorskip("numba")
        monkeypatch.setattr(kernels, "MIN_BODIES", 2)  # the kernel for every size
    else:
        monkeypatch.setattr(kernels, "MIN_BODIES", 10**9)
    monkeypatch.setattr(broadphase, "SWEEP_MAX_BODIES", 10**9 if path == "sweep" else 0)
    if path == "sweep":  # and never the hash behind it
        monkeypatch.setattr(broadphase, "_SWEEP_PAIRS_PER_BODY", 10**9)
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(2, 400))
        side = float(rng.choice([3.0, 30.0, 300.0]))
        centre = rng.uniform(-side, side, (n, 3))
        centre[:, 2] = rng.uniform(0, 2, n)
        half = np.where(
            rng.random((n, 1)) < 0.03, rng.uniform(3, 20, (n, 3)), rng.uniform(0.1, 1.0, (n, 3))
        )
        if trial % 5 == 0:  # boxes on a lattice, touching exactly
            centre = np.round(centre)
            half = np.full((n, 3), 0.5)
        lo, hi = centre - half, centre + half
        flat = rng.random(n) < 0.2
        i, j = candidate_pairs(lo, hi, float(rng.choice([0.5, 1.0, 4.0])), flat)
        bi, bj = np.triu_indices(n, 1)
        overlap = (lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi])
        keep = overlap[:, 0] & overlap[:, 1] & (overlap[:, 2] | flat[bi] | flat[bj])
        assert np.array_equal(i, bi[keep]) and np.array_equal(j, bj[keep]), trial


def test_2d_mode_ignores_height(sim: MultiRobotSimulationCore) -> None:
    low = spawn(sim, ShapeParams(half_extents=(0.5, 0.5, 0.2)), Pose.from_xyz(0, 0, 0.2))
    high = spawn(sim, ShapeParams(half_extents=(0.5, 0.5, 0.2)), Pose.from_xyz(0.3, 0, 3.0))
    assert sim.check_collisions() == []
    high.set_collision_mode(CollisionMode.NORMAL_2D)
    assert sim.check_collisions() == [(low.object_id, high.object_id)]


def test_static_pairs_and_ignore_static() -> None:
    for ignore in (False, True):
        with make_sim(ignore_static_collision=ignore, collision_narrowphase="aabb") as sim:
            rack_a = spawn(sim, ShapeParams(), Pose.from_xyz(0, 0, 0.5), CollisionMode.STATIC)
            spawn(sim, ShapeParams(), Pose.from_xyz(0.5, 0, 0.5), CollisionMode.STATIC)
            robot = spawn(
                sim, ShapeParams(half_extents=(0.2, 0.2, 0.2)), Pose.from_xyz(-0.6, 0, 0.2)
            )
            expected = [] if ignore else [(rack_a.object_id, robot.object_id)]
            assert sim.check_collisions() == expected


def test_rotated_boxes_with_overlapping_boxes_but_a_gap(sim: MultiRobotSimulationCore) -> None:
    """Two thin boards at 45 degrees: their AABBs overlap, the boards do not touch."""
    board = ShapeParams(half_extents=(1.0, 0.05, 0.5))
    a = spawn(sim, board, Pose.from_yaw(0, 0, 0.5, math.pi / 4))
    b = spawn(sim, board, Pose.from_yaw(0.9, -0.9, 0.5, math.pi / 4))
    sim.step_once()
    rows = sim.world.bodies.rows([a.handle, b.handle])
    lo, hi = sim.world.bodies["aabb_min"][rows], sim.world.bodies["aabb_max"][rows]
    assert np.all(lo[0] <= hi[1]) and np.all(lo[1] <= hi[0])  # boxes overlap
    assert sim.get_active_collision_pairs() == []  # closest points: no contact
    with make_sim(collision_narrowphase="aabb") as coarse:
        spawn(coarse, board, Pose.from_yaw(0, 0, 0.5, math.pi / 4))
        spawn(coarse, board, Pose.from_yaw(0.9, -0.9, 0.5, math.pi / 4))
        assert len(coarse.check_collisions()) == 1
    b.set_pose(Pose.from_yaw(0.05, -0.05, 0.5, math.pi / 4))  # now they touch
    assert sim.check_collisions() == [(a.object_id, b.object_id)]


def test_margin_counts_near_misses() -> None:
    cube = ShapeParams(half_extents=(0.5, 0.5, 0.5))
    for margin, expected in ((0.0, 0), (0.05, 0), (0.2, 1)):
        with make_sim(collision_margin=margin) as sim:
            spawn(sim, cube, Pose.from_xyz(0, 0, 0.5))
            spawn(sim, cube, Pose.from_xyz(1.1, 0, 0.5))  # a 10 cm gap
            assert len(sim.check_collisions()) == expected, margin


def test_one_start_and_one_end_per_episode_with_gated_checks() -> None:
    with make_sim(collision_check_frequency=5.0) as sim:  # every 20 steps at dt 0.01
        wall = spawn(
            sim,
            ShapeParams(half_extents=(0.1, 2.0, 1.0)),
            Pose.from_xyz(0, 0, 1.0),
            CollisionMode.STATIC,
        )
        mover = spawn(sim, ShapeParams(half_extents=(0.2, 0.2, 0.2)), Pose.from_xyz(-2, 0, 0.5))
        log: list[tuple[str, int, int]] = []
        sim.on("collision_started", lambda a, b: log.append(("start", a.object_id, b.object_id)))
        sim.on("collision_ended", lambda a, b: log.append(("end", a.object_id, b.object_id)))
        mine: list[str] = []
        mover.on("collision_started", lambda me, other: mine.append(f"hit {other.name}"))
        mover.on("collision_ended", lambda me, other: mine.append(f"left {other.name}"))
        sim.register_callback(
            lambda s, dt: mover.set_pose_raw((mover.get_pose().x + 1.0 * dt, 0, 0.5))
        )
        for _ in range(400):
            sim.step_once()
        pair = (min(wall.object_id, mover.object_id), max(wall.object_id, mover.object_id))
        assert [e[0] for e in log] == ["start", "end"]
        assert {e[1:] for e in log} == {pair} or {tuple(sorted(e[1:])) for e in log} == {pair}
        assert mine == [f"hit {wall.name}", f"left {wall.name}"]
        assert sim.collision_count == 1 and sim.get_active_collision_pairs() == []


def test_removal_ends_the_contact(sim: MultiRobotSimulationCore) -> None:
    a = spawn(sim, ShapeParams(), Pose.from_xyz(0, 0, 0.5))
    b = spawn(sim, ShapeParams(), Pose.from_xyz(0.5, 0, 0.5))
    ended = []
    sim.on("collision_ended", lambda x, y: ended.append((x.name, y.name)))
    sim.step_once()
    assert len(sim.get_active_collision_pairs()) == 1
    b.remove()
    sim.step_once()
    assert ended == [(a.name, b.name)] and sim.get_active_collision_pairs() == []


def test_a_listener_added_mid_contact_hears_its_end(sim: MultiRobotSimulationCore) -> None:
    a = spawn(sim, ShapeParams(), Pose.from_xyz(0, 0, 0.5))
    b = spawn(sim, ShapeParams(), Pose.from_xyz(0.5, 0, 0.5))
    sim.step_once()  # the contact starts while nobody listens (events are skipped then)
    ended = []
    sim.on("collision_ended", lambda x, y: ended.append((x.name, y.name)))
    b.set_pose(Pose.from_xyz(5, 0, 0.5))
    sim.step_once()
    assert ended == [(a.name, b.name)]


def test_a_carrier_does_not_collide_with_its_load(sim: MultiRobotSimulationCore) -> None:
    robot = spawn(sim, ShapeParams(half_extents=(0.3, 0.3, 0.2)), Pose.from_xyz(0, 0, 0.2))
    load = spawn(sim, ShapeParams(half_extents=(0.2, 0.2, 0.2)), Pose.from_xyz(0, 0, 0.5))
    assert sim.check_collisions() == [(robot.object_id, load.object_id)]
    robot.attach_object(load)
    assert sim.check_collisions() == []


def test_color_change() -> None:
    with make_sim(enable_collision_color_change=True) as sim:
        blue = ShapeParams(rgba_color=(0, 0, 1, 1))
        a = spawn(sim, blue, Pose.from_xyz(0, 0, 0.5))
        spawn(sim, blue, Pose.from_xyz(0.5, 0, 0.5))

        def color() -> tuple[float, ...]:
            return tuple(
                round(c, 2)
                for c in pb.getVisualShapeData(a.object_id, physicsClientId=sim.client)[0][7]
            )

        sim.step_once()
        assert color() == (0.9, 0.1, 0.1, 1.0)
        a.set_pose(Pose.from_xyz(5, 0, 0.5))
        sim.step_once()
        assert color() == (0.0, 0.0, 1.0, 1.0)


def test_contact_points_need_physics_and_see_resting_contact() -> None:
    with pytest.raises(ConfigError, match="'contact_points' needs physics=True"):
        make_sim(collision_narrowphase="contact_points")
    with make_sim(physics=True, timestep=1 / 240, collision_narrowphase="contact_points") as sim:
        ball = SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=ShapeParams("sphere", radius=0.2),
                initial_pose=Pose.from_xyz(0, 0, 1.0),
                mass=1.0,
            ),
            sim_core=sim,
        )
        table = spawn(sim, ShapeParams(half_extents=(1, 1, 0.25)), Pose.from_xyz(0, 0, 0.25))
        for _ in range(240):
            sim.step_once()
        assert sim.get_active_collision_pairs() == [
            (min(ball.object_id, table.object_id), max(ball.object_id, table.object_id))
        ]


def test_profiling_has_the_collision_breakdown(sim: MultiRobotSimulationCore) -> None:
    for i in range(20):
        spawn(sim, ShapeParams(), Pose.from_xyz(i * 0.9, 0, 0.5))
    stats = sim.step_once(return_profiling=True)
    assert stats is not None
    assert {"collision_aabb", "collision_broadphase", "collision_narrowphase"} <= set(stats)
    assert stats["collision_check"] >= stats["collision_broadphase"] > 0


def test_adding_bodies_one_at_a_time_resizes_cells_rarely() -> None:
    """auto_adaptive re-measures only when the count doubles: O(log N) resizes, amortised O(1)."""
    with make_sim(enable_floor=False) as sim:
        shape = ShapeParams(half_extents=(0.2, 0.2, 0.2))
        for i in range(5000):
            spawn(sim, shape, Pose.from_xyz(i % 100, i // 100, 0.2))
            if i % 50 == 0:
                sim.check_collisions()
        assert sim.collisions.cells.resizes <= math.ceil(math.log2(5000)) + 1
        assert sim.collisions.cells.cell_size == pytest.approx(0.8)


def test_lazy_sync_pushes_only_the_bodies_the_narrow_phase_reads() -> None:
    ball = ShapeParams("sphere", radius=0.5)  # spheres need PyBullet's query (boxes do not)
    with make_sim(pose_sync="lazy") as sim:
        a = spawn(sim, ball, Pose.from_xyz(0, 0, 0.5))
        b = spawn(sim, ball, Pose.from_xyz(3, 0, 0.5))
        far = spawn(sim, ball, Pose.from_xyz(20, 0, 0.5))

        def move(s: MultiRobotSimulationCore, dt: float) -> None:
            b.set_pose(Pose.from_xyz(0.5, 0, 0.5))  # into contact with a
            far.set_pose(Pose.from_xyz(25, 0, 0.5))  # alone

        cid = sim.register_callback(move)
        sim.step_once()
        sim.unregister_callback(cid)

        def raw_x(obj: SimObject) -> float:
            return pb.getBasePositionAndOrientation(obj.object_id, physicsClientId=sim.client)[0][0]

        assert sim.get_active_collision_pairs() == [(a.object_id, b.object_id)]
        assert raw_x(b) == pytest.approx(0.5)  # pushed for the closest-points query
        assert raw_x(far) == pytest.approx(20.0)  # not needed by anything: still lazy


def test_box_pairs_are_tested_exactly_without_pybullet() -> None:
    """Single boxes: rotated boards that AABBs would confuse, decided with box geometry alone."""
    board = ShapeParams(half_extents=(1.0, 0.05, 0.5))
    with make_sim(pose_sync="lazy") as sim:
        a = spawn(sim, board, Pose.from_yaw(0, 0, 0.5, math.pi / 4))
        b = spawn(sim, board, Pose.from_yaw(5, 5, 0.5, math.pi / 4))
        assert sim.world.bodies["exact_box"].all()
        b.set_pose(Pose.from_yaw(0.9, -0.9, 0.5, math.pi / 4))  # boxes overlap, boards do not
        sim.register_callback(
            lambda s, dt: b.set_pose(Pose.from_yaw(0.05, -0.05, 0.5, math.pi / 4))
        )
        sim.step_once()  # moved inside the step: touching now, and nothing pushed to PyBullet
        assert sim.get_active_collision_pairs() == [(a.object_id, b.object_id)]
        raw = pb.getBasePositionAndOrientation(b.object_id, physicsClientId=sim.client)[0]
        assert raw[0] == pytest.approx(0.9)


@pytest.mark.parametrize("cell_size", [0.25, 1.15, 3.0])  # many wide bodies, typical, coarse
def test_dense_fleets_match_brute_force_on_every_path(cell_size: float) -> None:
    rng = np.random.default_rng(7)
    n = 1500  # at 0.25 m most boxes are wider than a cell: the multi-cell hash is used
    centre = rng.uniform(-15, 15, (n, 3)) * [1, 1, 0.05]
    half = rng.uniform(0.05, 0.6, (n, 3))
    lo, hi = centre - half, centre + half
    i, j = candidate_pairs(lo, hi, cell_size)
    bi, bj = np.triu_indices(n, 1)
    keep = np.all((lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi]), axis=1)
    assert np.array_equal(i, bi[keep]) and np.array_equal(j, bj[keep])  # same pairs, same order


def test_an_idle_scene_reuses_the_last_check_until_something_changes(
    sim: MultiRobotSimulationCore,
) -> None:
    a = spawn(sim, ShapeParams(), Pose.from_xyz(0, 0, 0.5))
    b = spawn(sim, ShapeParams(), Pose.from_xyz(0.5, 0, 0.5))
    pair = [(a.object_id, b.object_id)]
    assert sim.check_collisions() == pair
    sim.step_once()  # nothing moved: the broadphase is not run again
    assert sim.get_active_collision_pairs() == pair
    assert sim.collisions.timings["collision_broadphase"] == 0.0
    b.set_pose(Pose.from_xyz(3, 0, 0.5))  # a move is seen
    assert sim.check_collisions() == []
    c = spawn(sim, ShapeParams(), Pose.from_xyz(3, 0.5, 0.5))  # so is a new body
    assert sim.check_collisions() == [(b.object_id, c.object_id)]
    sim.collisions.ignore_static = True  # and a settings change
    c.remove()  # and a removal
    assert sim.check_collisions() == []
    b.set_pose(Pose.from_xyz(0.5, 0, 0.5))
    assert sim.check_collisions() == pair
    b.set_collision_mode("disabled")  # a mode change without a move
    assert sim.check_collisions() == []


def test_bodies_far_apart_fall_back_to_the_folded_hash() -> None:
    lo = np.array([[0.0, 0, 0], [0.5, 0, 0], [1e12, 1e12, 0], [1e12 + 0.5, 1e12, 0]])
    hi = lo + 1.0
    i, j = candidate_pairs(lo, hi, cell_size=2.0)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (2, 3)]


def test_boxes_square_to_the_axes_skip_sat_with_the_same_answer() -> None:
    """Boxes at multiples of 90 degrees are decided by their AABBs; mixed with tilted ones, the
    result equals the separating-axis test on every pair."""
    rng = np.random.default_rng(5)
    n = 120
    yaws = np.where(rng.random(n) < 0.7, rng.integers(0, 4, n) * math.pi / 2, rng.uniform(0, 6, n))
    half = rng.uniform(0.1, 0.6, (n, 3))
    centre = np.c_[rng.uniform(0, 6, (n, 2)), half[:, 2]]
    with make_sim(pose_sync="lazy") as sim:
        objs = [
            spawn(sim, ShapeParams(half_extents=tuple(half[k])), Pose.from_yaw(*centre[k], yaws[k]))
            for k in range(n)
        ]
        found = set(sim.check_collisions())
    rot = quat.to_matrix(quat.from_yaw(yaws))
    bi, bj = np.triu_indices(n, 1)
    touch = boxes_touch(centre[bi], rot[bi], half[bi], centre[bj], rot[bj], half[bj])
    ids = [o.object_id for o in objs]
    truth = {tuple(sorted((ids[a], ids[b]))) for a, b in zip(bi[touch], bj[touch], strict=True)}
    assert found == truth and len(truth) > 20


def test_sorted_pair_sets_differ_and_dedupe_like_numpy() -> None:
    from fleetsim.collision.pairs import sorted_difference, unique_sorted

    rng = np.random.default_rng(3)
    for _ in range(200):
        a = np.unique(rng.integers(0, 60, int(rng.integers(0, 40))))
        b = np.unique(rng.integers(0, 60, int(rng.integers(0, 40))))
        assert np.array_equal(sorted_difference(a, b), np.setdiff1d(a, b))
        keys = rng.integers(0, 60, int(rng.integers(0, 30)))
        if rng.random() < 0.5:
            keys = np.unique(keys)  # already sorted and unique: returned as is
        assert np.array_equal(unique_sorted(keys), np.unique(keys))


def test_the_compiled_grid_numbers_cells_along_the_fleets_rows_with_the_same_pairs() -> None:
    """The compiled grid numbers its cells along the axis the table's order steps along (a
    fleet spawned along rows: x; along columns: y), and finds the same pairs, whole or asked
    for a few bodies, with the cells numbered either way."""
    pytest.importorskip("numba")
    from fleetsim.collision import kernels

    rng = np.random.default_rng(5)
    side = 60
    rows = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2) * 0.9
    for along, centre_xy in ((0, rows), (1, rows[:, ::-1])):  # x fastest, then y fastest
        centre = np.zeros((len(centre_xy), 3))
        centre[:, :2] = centre_xy + rng.normal(0, 0.2, centre_xy.shape)
        lo, hi = centre - 0.45, centre + 0.45
        n = len(lo)
        found = kernels.narrow_bounds(lo, hi, 1.0)
        assert found is not None and found[5] == along
        bi, bj = np.triu_indices(n, 1)
        keep = np.all((lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi]), axis=1)
        use, flat = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
        query = rng.random(n) < 0.1
        asked = keep & (query[bi] | query[bj])
        for inner in (0, 1):
            i, j = kernels.grid_pairs(lo, hi, use, 1.0, flat, inner=inner)
            assert np.array_equal(i, bi[keep]) and np.array_equal(j, bj[keep])
            i, j = kernels.grid_pairs(lo, hi, use, 1.0, flat, query=query, inner=inner)
            got = set(zip(i.tolist(), j.tolist(), strict=True))
            assert got == set(zip(bi[asked].tolist(), bj[asked].tolist(), strict=True))


def test_the_compiled_broadphase_in_two_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two simulations stepped in two threads: each thread has its own kernel workspace (the
    kernel runs without the GIL), so both get exactly their own scene's pairs."""
    pytest.importorskip("numba")
    import threading

    from fleetsim.collision import kernels

    monkeypatch.setattr(kernels, "MIN_BODIES", 2)
    scenes = []
    for seed, n in ((1, 3000), (2, 1200)):
        rng = np.random.default_rng(seed)
        centre = rng.uniform(0, np.sqrt(n) * 1.5, (n, 3)) * [1, 1, 0]
        lo, hi = centre - 0.4, centre + 0.4
        bi, bj = np.triu_indices(n, 1)
        keep = np.all((lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi]), axis=1)
        scenes.append((lo, hi, bi[keep], bj[keep]))
    wrong: list[int] = []

    def run(lo: np.ndarray, hi: np.ndarray, ei: np.ndarray, ej: np.ndarray) -> None:
        for _ in range(40):
            i, j = candidate_pairs(lo, hi, 1.0)
            if not (np.array_equal(i, ei) and np.array_equal(j, ej)):
                wrong.append(len(lo))

    threads = [threading.Thread(target=run, args=scene) for scene in scenes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


@pytest.mark.parametrize("scene_size", ["small", "large"])
@pytest.mark.parametrize("narrow", ["aabb", "closest_points"])
def test_checks_that_test_only_what_changed_equal_full_checks(
    narrow: str, scene_size: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check tests only the bodies whose boxes changed since the last one and keeps the
    other pairs: a small scene from one matrix, a large one through the compiled grid (only
    the changed bodies look round their cells). Two simulations get the same rounds (some
    bodies move, some turn, a static body moves, modes change, bodies come and go), one with
    every check in full: the pairs are the same after every round, and equal brute force with
    "aabb"."""
    from fleetsim.collision import broadphase, kernels
    from fleetsim.collision.last_check import LastCheck
    from fleetsim.collision.system import CollisionSystem

    if scene_size == "large":  # (the scene is not, but takes the large scene's path)
        pytest.importorskip("numba")
        monkeypatch.setattr(broadphase, "SMALL_SCENE_PAIRS", 0)
        monkeypatch.setattr(kernels, "MIN_BODIES", 2)

    rng = np.random.default_rng(12)
    plan = [  # (pick, step, yaw) per body and round: drawn once, replayed in both simulations
        (rng.random(40), rng.uniform(-0.4, 0.4, (40, 3)) * [1, 1, 0.2], rng.uniform(-3, 3, 40))
        for _ in range(40)
    ]
    partial: list[bool] = []
    candidates = CollisionSystem._candidates

    def spy(self: CollisionSystem, changed: np.ndarray | None, groups: Any) -> tuple:
        found = candidates(self, changed, groups)
        partial.append(found[2])
        return found

    monkeypatch.setattr(CollisionSystem, "_candidates", spy)
    found = {}
    for full in (False, True):
        if full:
            monkeypatch.setattr(LastCheck, "changed", lambda *a: None)
        with make_sim(collision_narrowphase=narrow) as sim:
            scene = np.random.default_rng(5)
            objects = []
            for k in range(30):
                mode = CollisionMode.NORMAL_3D
                if k % 7 == 0:
                    mode = CollisionMode.NORMAL_2D
                if k % 10 == 0:
                    mode = CollisionMode.STATIC
                shape = ShapeParams("box", half_extents=tuple(scene.uniform(0.2, 0.6, 3)))
                xyz = scene.uniform(-2.5, 2.5, 3) * [1, 1, 0.1] + [0, 0, 0.5]
                objects.append(spawn(sim, shape, Pose.from_yaw(*xyz, 0.0), mode))
            seen = []

            def busiest(sim: MultiRobotSimulationCore, objects: list[SimObject]) -> SimObject:
                """The body in the most contacts (not the last one)."""
                ids = [i for pair in sim.get_active_collision_pairs() for i in pair]
                return max(objects[:-1], key=lambda body: ids.count(body.object_id))

            for round_, (pick, step, yaw) in enumerate(plan):
                for k, o in enumerate(objects):
                    static = o.collision_mode == CollisionMode.STATIC
                    if round_ == 9 and static:  # the structure moves too, once
                        o.set_pose(Pose.from_xyz(*(np.asarray(o.get_pose().position) + 0.8)))
                    elif pick[k] < 0.25 and not static:
                        pose = o.get_pose()
                        turn = yaw[k] if pick[k] < 0.08 else pose.yaw
                        o.set_pose(Pose.from_yaw(*(np.asarray(pose.position) + step[k]), turn))
                if round_ == 11:
                    switched = busiest(sim, objects)
                    switched.set_collision_mode(CollisionMode.DISABLED)
                if round_ == 17:
                    switched.set_collision_mode(CollisionMode.NORMAL_3D)
                if round_ == 23:  # (the last row moves into its place)
                    gone = busiest(sim, objects)
                    objects.remove(gone)
                    gone.remove()
                if round_ == 29:
                    shape = ShapeParams("box", half_extents=(0.5, 0.5, 0.5))
                    objects.append(spawn(sim, shape, Pose.from_xyz(0, 0, 0.5)))
                if round_ == 31:  # a body picks up one it touches, neither moving: no collision
                    by_id = {o.object_id: o for o in objects}
                    a, b = next(
                        (by_id[i], by_id[j])
                        for i, j in sim.get_active_collision_pairs()
                        if CollisionMode.STATIC
                        not in (by_id[i].collision_mode, by_id[j].collision_mode)
                    )
                    a.attach_object(b)
                if round_ == 35:
                    a.detach_object(b)
                sim.step_once()
                seen.append(sim.collisions.active.copy())
                if narrow == "aabb" and not 31 <= round_ < 35:  # (brute force knows no loads)
                    assert sim.get_active_collision_pairs() == brute_force(sim), round_
            found[full] = seen
            if not full:
                # most checks tested only the changed bodies (a large scene tests every pair
                # when more than a third changed)
                assert sum(partial) >= (30 if scene_size == "small" else 20)
                partial.clear()
    assert not any(partial)  # (the full run never took the partial path)
    for round_, (a, b) in enumerate(zip(found[False], found[True], strict=True)):
        assert np.array_equal(a, b), round_
    assert len({tuple(keys) for keys in found[True]}) > 10  # contacts came and went


@pytest.mark.parametrize("path", ["numba", "numpy", "sweep"])
def test_crowded_cells_and_mixed_sizes_equal_brute_force(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dense scenes: dozens of bodies to a cell (thousands in a few square metres) and bodies
    from 2 cm to 10 m across in one scene: every broadphase gives exactly the brute-force
    pairs, sorted."""
    from fleetsim.collision import broadphase, kernels

    if path == "numba":
        pytest.importorskip("numba")
        monkeypatch.setattr(kernels, "MIN_BODIES", 2)
    else:
        monkeypatch.setattr(kernels, "MIN_BODIES", 10**9)
    monkeypatch.setattr(broadphase, "SWEEP_MAX_BODIES", 10**9 if path == "sweep" else 0)
    rng = np.random.default_rng(37)
    crowded = 0.0
    for trial in range(6):
        n = int(rng.integers(500, 1200))
        side = float(rng.choice([0.06, 0.2, 0.6])) * n**0.5  # up to ~300 bodies a square metre
        centre = np.column_stack((rng.uniform(0, side, (n, 2)), rng.uniform(0, 0.5, n)))
        size = rng.choice([0.01, 0.3, 5.0], (n, 1), p=[0.4, 0.55, 0.05])
        half = size * rng.uniform(0.5, 1.0, (n, 3))
        lo, hi = centre - half, centre + half
        flat = rng.random(n) < 0.1
        i, j = candidate_pairs(lo, hi, float(rng.choice([0.05, 0.5, 2.0])), flat)
        bi, bj = np.triu_indices(n, 1)
        overlap = (lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi])
        keep = overlap[:, 0] & overlap[:, 1] & (overlap[:, 2] | flat[bi] | flat[bj])
        assert np.array_equal(i, bi[keep]) and np.array_equal(j, bj[keep]), trial
        crowded = max(crowded, keep.sum() / n)
    assert crowded > 20  # pairs a body, in the most crowded scene


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("motion", ["differential", "omnidirectional"])
def test_a_dense_crowd_touches_exactly_as_brute_force_says(
    motion: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """600 cubes 0.6 m apart (0.4 m wide) driving through each other to random goals, turning
    as they go: at every step the pairs touching are exactly those the 15-axis box test finds
    over all pairs (no broadphase), in the compiled and the NumPy narrow phase alike."""
    from fleetsim.collision import box_pairs, kernels
    from fleetsim.control import kernels as control_kernels

    if compiled:
        pytest.importorskip("numba")
    else:
        for module, name in (
            (kernels, "MIN_BODIES"),
            (box_pairs, "MIN_ROWS"),
            (control_kernels, "MIN_ROWS"),
        ):
            monkeypatch.setattr(module, name, 10**9)
    with make_sim(timestep=0.1) as sim:
        robots = AgentManager(sim).spawn_agents_grid(
            600,
            GridSpawnParams(x_max=15, y_max=15, spacing=0.6),
            AgentSpawnParams(urdf_path="simple_cube", motion_mode=motion),
        )
        rng = np.random.default_rng(2)
        for robot in robots:
            x, y = rng.uniform(0, 15, 2)
            robot.set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
        b = sim.world.bodies
        grow = sim.collisions.margin / 2
        bi, bj = np.triu_indices(len(b), 1)
        touching_seen = 0
        for step in range(40):
            sim.step_once()
            if step % 4:
                continue
            rot = quat.to_matrix(b["quat"])
            lo, hi = b["aabb_local_min"], b["aabb_local_max"]
            centre = b["pos"] + np.einsum("nij,nj->ni", rot, (lo + hi) / 2)
            half = (hi - lo) / 2 + grow
            touch = boxes_touch(centre[bi], rot[bi], half[bi], centre[bj], rot[bj], half[bj])
            ids = b.handles  # (the robots have no PyBullet body: none is needed)
            expected = sorted(zip(ids[bi[touch]].tolist(), ids[bj[touch]].tolist(), strict=True))
            assert sim.collisions.active_pairs == expected, step
            touching_seen += len(expected)
        assert touching_seen > 500
        if motion == "differential":
            assert (np.abs(quat.yaw_of(b["quat"])) > 0.1).sum() > 300  # turned boxes


def test_the_compiled_narrow_phase_sorts_mixed_pairs_as_numpy_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crowded mix (turned cubes, spheres and cylinders PyBullet must answer for, 2-D bodies
    whose overlap in the plane stands, mobile robots by their footprints): the compiled
    narrow phase, which sorts the pairs in one pass, finds the pairs NumPy finds, and each
    path both answers pairs itself and asks PyBullet."""
    pytest.importorskip("numba")
    from fleetsim.collision import box_pairs, system

    def touching() -> list[tuple[int, int]]:
        with make_sim(collision_margin=0.02) as sim:
            rng = np.random.default_rng(4)
            for k in range(240):
                xyz = (*rng.uniform(0, 7, 2), 0.3)
                pose = Pose.from_yaw(*xyz, rng.uniform(-3, 3))
                if k % 6 == 0:
                    spawn(sim, ShapeParams("sphere", radius=0.3), pose)
                elif k % 6 == 1:
                    spawn(sim, ShapeParams("cylinder", radius=0.2, height=0.5), pose)
                elif k % 6 == 2:
                    spawn(
                        sim,
                        ShapeParams(half_extents=(0.3, 0.2, 0.3)),
                        pose,
                        CollisionMode.NORMAL_2D,
                    )
                elif k % 6 == 3:
                    Agent.from_urdf("mobile_robot", pose, sim_core=sim)
                else:
                    spawn(sim, ShapeParams(half_extents=(0.3, 0.15, 0.3)), pose)
            return sim.check_collisions()

    verdicts: list[np.ndarray] = []
    classify = box_pairs.classify_pairs
    monkeypatch.setattr(
        system, "classify_pairs", lambda *a: verdicts.append(classify(*a)) or verdicts[-1]
    )
    compiled = touching()
    monkeypatch.setattr(box_pairs, "MIN_ROWS", 10**9)
    plain = touching()
    assert compiled == plain and len(compiled) > 150
    assert len(verdicts) == 2 and np.array_equal(verdicts[0], verdicts[1])
    assert all(
        (verdicts[0] == k).sum() > 20
        for k in (box_pairs.SEPARATE, box_pairs.TOUCHING, box_pairs.ASK)
    )
