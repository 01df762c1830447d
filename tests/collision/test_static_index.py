"""The static index pairs moving boxes with the static boxes near them: every overlapping pair
is among its candidates, whatever the sizes (long walls, a floor, unbounded boxes, moving
bodies wider than a cell), and it is rebuilt only when the static boxes change."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim import CollisionMode, Pose
from fleetsim.collision.broadphase import overlapping
from fleetsim.collision.static_index import StaticIndex
from fleetsim.objects import ShapeParams

from ..conftest import make_sim
from .helpers import spawn


def boxes(rng: np.random.Generator, n: int, size: float) -> tuple[np.ndarray, np.ndarray]:
    centre = rng.uniform(-30, 30, (n, 3))
    half = rng.uniform(0.05, size, (n, 3))
    return centre - half, centre + half


@pytest.mark.parametrize(("cell", "far"), [(0.5, False), (2.0, False), (7.0, False), (1.0, True)])
def test_candidates_hold_every_overlapping_pair(cell: float, far: bool) -> None:
    rng = np.random.default_rng(int(cell * 10))
    lo_m, hi_m = boxes(rng, 300, 1.0)
    lo_m[:5], hi_m[:5] = lo_m[:5] - 3.0, hi_m[:5] + 3.0  # moving bodies over many cells
    lo_s, hi_s = boxes(rng, 200, 0.5)
    hi_s[:20, 0] += rng.uniform(5, 40, 20)  # long walls
    lo_s[20], hi_s[20] = (-500, -500, -50), (500, 500, 50)  # a huge block
    lo_s[21], hi_s[21] = (-np.inf, 0, 0), (np.inf, 0.1, 3)  # unbounded
    if far:  # a box far away: the cells are looked up by key, not in a dense table
        lo_s[22], hi_s[22] = lo_s[22] + 1e5, hi_s[22] + 1e5
        lo_m[6], hi_m[6] = lo_s[22] + 0.1, lo_s[22] + 0.3
    lo, hi = np.concatenate((lo_m, lo_s)), np.concatenate((hi_m, hi_s))
    moving, fixed = np.arange(300), np.arange(300, 500)
    index = StaticIndex()
    i, j = index.pairs(lo, hi, moving, fixed, cell)
    assert np.isin(i, moving).all() and np.isin(j, fixed).all()
    assert len(set(zip(i.tolist(), j.tolist(), strict=True))) == len(i)  # each pair once
    found = set(zip(*(a.tolist() for a in overlapping(lo, hi, i, j)), strict=True))
    ii, jj = np.meshgrid(moving, fixed, indexing="ij")
    expected = set(
        zip(*(a.tolist() for a in overlapping(lo, hi, ii.ravel(), jj.ravel())), strict=True)
    )
    assert found == expected and len(expected) > 300  # the block alone meets every body
    assert index.pairs(lo, hi, moving, fixed, cell)[0].size == i.size and index.builds == 1
    assert (index._table is None) == far and (not far or (6, 322) in found)
    lo[310] += 100.0  # a static box moved: rebuilt
    hi[310] += 100.0
    index.pairs(lo, hi, moving, fixed, cell)
    assert index.builds == 2


def test_a_moved_static_body_collides_where_it_is_now() -> None:
    with make_sim(collision_narrowphase="aabb") as sim:
        wall = spawn(
            sim, ShapeParams(half_extents=(5, 0.1, 1)), Pose.from_xyz(0, 0, 1), CollisionMode.STATIC
        )
        robot = spawn(sim, ShapeParams(half_extents=(0.3, 0.3, 0.3)), Pose.from_xyz(4, 3, 0.3))
        assert sim.check_collisions() == []
        wall.set_pose(Pose.from_xyz(0, 3, 1))
        assert sim.check_collisions() == [(wall.object_id, robot.object_id)]


@pytest.mark.parametrize(("cell", "far"), [(0.5, False), (2.0, False), (1.0, True)])
def test_overlaps_compiled_and_not_give_the_overlapping_pairs(
    cell: float, far: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`overlaps` (the lookup and the overlap test in one compiled pass, or in NumPy) gives
    exactly the overlapping (moving, static) pairs, 2-D bodies' heights ignored: with moving
    bodies wider than a cell, a huge block, an unbounded box, and without the dense table."""
    pytest.importorskip("numba")
    from fleetsim.collision import static_index

    rng = np.random.default_rng(int(cell * 10) + 1)
    lo_m, hi_m = boxes(rng, 400, 1.0)
    lo_m[:5], hi_m[:5] = lo_m[:5] - 3.0, hi_m[:5] + 3.0  # wider than a cell
    lo_s, hi_s = boxes(rng, 300, 0.5)
    hi_s[:20, 0] += rng.uniform(5, 40, 20)
    lo_s[20], hi_s[20] = (-500, -500, 40), (500, 500, 50)  # a huge block, high up
    lo_s[21], hi_s[21] = (-np.inf, 0, 0), (np.inf, 0.1, 3)
    if far:
        lo_s[22], hi_s[22] = lo_s[22] + 1e5, hi_s[22] + 1e5
        lo_m[6], hi_m[6] = lo_s[22] + 0.1, lo_s[22] + 0.3
    lo, hi = np.concatenate((lo_m, lo_s)), np.concatenate((hi_m, hi_s))
    flat = rng.random(700) < 0.3  # 2-D bodies: the high block's height does not save them
    moving, fixed = np.arange(400), np.arange(400, 700)
    ii, jj = np.meshgrid(moving, fixed, indexing="ij")
    expected = set(
        zip(*(a.tolist() for a in overlapping(lo, hi, ii.ravel(), jj.ravel(), flat)), strict=True)
    )
    compiled = StaticIndex().overlaps(lo, hi, moving, fixed, cell, flat)
    monkeypatch.setattr(static_index, "MIN_ROWS", 10**9)
    plain = StaticIndex().overlaps(lo, hi, moving, fixed, cell, flat)
    for found in (compiled, plain):
        pairs = list(zip(*(a.tolist() for a in found), strict=True))
        assert set(pairs) == expected and len(pairs) == len(expected)
    assert len(expected) > 100
