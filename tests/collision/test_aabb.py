import subprocess
import sys
from typing import Any

import numpy as np
import pybullet as pb
import pytest
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


def test_the_compiled_box_refresh_equals_numpy_to_the_last_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large fleets refresh their world boxes with a Numba kernel: in a simulation where part
    of the fleet moves, the boxes equal NumPy's `world_aabbs` exactly, and rows that did not
    move keep theirs."""
    pytest.importorskip("numba")
    from fleetsim import jit
    from fleetsim.collision import kernels

    monkeypatch.setattr(kernels, "MIN_BODIES", 2)
    monkeypatch.setattr(jit, "ONE_OFF_ROWS", 2)  # (whatever loaded Numba before, or not)
    ran: list[bool] = []
    compiled = kernels.refresh_boxes
    monkeypatch.setattr(kernels, "refresh_boxes", lambda *a: ran.append(compiled(*a)) or ran[-1])
    rng = np.random.default_rng(4)
    with make_sim() as sim:
        boxes = [spawn_box(sim, (float(x), 0.0, 0.5), half=0.2) for x in range(40)]
        bodies = sim._world.bodies
        movers = boxes[::3]
        positions = rng.uniform(-5, 5, (len(movers), 3))
        orientations = quat.normalize(rng.normal(size=(len(movers), 4)))
        still = [b for b in boxes if b not in movers]
        sim.check_collisions()  # every box computed once
        ran.clear()
        before = bodies["aabb_min"][bodies.rows(np.array([b.handle for b in still]))].copy()
        sim.set_poses(movers, positions, orientations)
        sim.check_collisions()  # refreshes the moved rows' boxes
        assert ran and all(ran)  # with the kernel
        rows = bodies.rows(np.array([b.handle for b in movers]))
        columns = ("pos", "quat", "aabb_local_min", "aabb_local_max")
        lo, hi = world_aabbs(*(bodies[name][rows] for name in columns))
        assert np.array_equal(bodies["aabb_min"][rows], lo)
        assert np.array_equal(bodies["aabb_max"][rows], hi)
        assert not np.array_equal(lo, before[: len(lo)])  # they did move
        after = bodies["aabb_min"][bodies.rows(np.array([b.handle for b in still]))]
        assert np.array_equal(after, before)


@pytest.mark.parametrize("compiled_between", [False, True])
def test_boxes_of_bodies_that_only_moved_are_the_full_computation_to_the_last_bit(
    monkeypatch: pytest.MonkeyPatch, compiled_between: bool
) -> None:
    """A body that moved without turning gets its world box from the turned box kept for its
    orientation: over rounds where some bodies move, some turn, some do both, one is removed
    (rows swap) and new ones come, every box equals `world_aabbs` of the whole table exactly.
    With `compiled_between`, one round in the middle goes through the compiled refresh of large
    fleets (which leaves the turned boxes as they were): the rounds after it are still exact,
    and the narrow phase's plane boxes it worked out stay those of each row's pose (or are
    marked not worked out) through the rounds, a removal and new rows after it."""
    from fleetsim.collision import kernels

    rng = np.random.default_rng(9)
    with make_sim() as sim:
        boxes = [spawn_box(sim, (float(x), 0.0, 0.5), half=0.1 + 0.02 * x) for x in range(12)]
        bodies = sim._world.bodies
        rows = bodies.rows(np.array([b.handle for b in boxes[::2]]))
        bodies["aabb_local_min"][rows] -= (0.3, 0.0, 0.1)  # boxes off their body's origin
        bodies["box_quat"][rows] = np.nan  # (local boxes are only written as rows are made)
        bodies["moved"][rows] = True
        columns = ("pos", "quat", "aabb_local_min", "aabb_local_max")
        for round_ in range(10):
            if compiled_between and round_ == 5:
                if kernels.kernel() is None:
                    pytest.skip("the compiled refresh needs numba")
                monkeypatch.setattr(kernels, "MIN_BODIES", 1)
                monkeypatch.setattr("fleetsim.jit.ONE_OFF_ROWS", 1)
            elif round_ == 6:
                monkeypatch.undo()
            if round_ in (3, 6):
                boxes.pop(2).remove()
            if round_ == 4:
                boxes += [spawn_box(sim, (5.0, 5.0, 0.5), half=0.3)]
            pick = rng.random(len(boxes))
            movers = [b for b, p in zip(boxes, pick, strict=True) if p < 0.6]
            turners = [b for b, p in zip(boxes, pick, strict=True) if p < 0.2]
            movers = [b for b, p in zip(boxes, pick, strict=True) if 0.2 <= p < 0.6]
            if turners:  # moved and turned
                sim.set_poses(
                    turners,
                    rng.uniform(-5, 5, (len(turners), 3)),
                    quat.normalize(rng.normal(size=(len(turners), 4))),
                )
            if movers:  # moved only (their orientation as it was, to the bit)
                sim.set_poses(movers, rng.uniform(-5, 5, (len(movers), 3)))
            sim.step_once()
            lo, hi = world_aabbs(*(bodies[name] for name in columns))
            assert np.array_equal(bodies["aabb_min"], lo), round_
            assert np.array_equal(bodies["aabb_max"], hi), round_
            if not compiled_between:  # every box refreshed keeps its turned part for reuse
                assert np.array_equal(bodies["box_quat"], bodies["quat"]), round_
            _assert_plane_boxes_true(bodies, round_)
            worked_out = np.count_nonzero(bodies["level_kind"] >= 0)
            if round_ < 5 or not compiled_between:  # (NumPy's refresh works none out)
                assert worked_out == 0, round_
            elif round_ == 5:
                assert worked_out > 0


def _assert_plane_boxes_true(bodies: Any, round_: int) -> None:
    """Each row's `level_kind` and `level_box`, where worked out, are its pose's (to the bit)."""
    kind, plane = bodies["level_kind"], bodies["level_box"]
    q, pos = bodies["quat"], bodies["pos"]
    lo, hi = bodies["aabb_local_min"], bodies["aabb_local_max"]
    level = (q[:, 0] == 0) & (q[:, 1] == 0)
    expected = np.where(level, np.where(q[:, 2] == 0, 0, 1), 2)
    known = kind >= 0
    assert np.array_equal(kind[known], expected[known]), round_
    z, w = q[:, 2], q[:, 3]
    c, s = 1 - z * (2 * z), w * (2 * z)
    m, h = (lo + hi) / 2, (hi - lo) / 2
    centre = np.c_[pos[:, 0] + (c * m[:, 0] - s * m[:, 1]), pos[:, 1] + (s * m[:, 0] + c * m[:, 1])]
    want = np.c_[c, s, centre, pos[:, 2] + m[:, 2], h]
    rows = known & level
    assert np.array_equal(plane[rows], want[rows]), round_


LOADS_NUMBA = """
import sys
import numpy as np
from fleetsim import (AgentManager, AgentSpawnParams, GridSpawnParams, MultiRobotSimulationCore,
                      SimObject, SimulationParams)
sim = MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0))
k = int(sys.argv[1])
SimObject.static_boxes(np.c_[np.arange(k) * 2.0, np.full(k, -5.0), np.full(k, 0.5)],
                       np.full((k, 3), 0.4), np.zeros(k), sim_core=sim)
AgentManager(sim).spawn_agents_grid(100, GridSpawnParams(x_max=20, y_max=20, spacing=2),
                                    AgentSpawnParams())
for _ in range(5):
    sim.step_once()
print("numba" in sys.modules)
"""


@pytest.mark.parametrize(("racks", "loaded"), [(60, "False"), (2100, "True")])
def test_the_first_box_refresh_loads_numba_only_for_a_large_world(racks: int, loaded: str) -> None:
    """100 robots and 60 racks (160 rows on the first refresh) run without loading Numba's
    half second of imports; a refresh of 2,200 rows is worth it."""
    pytest.importorskip("numba")
    out = subprocess.run(
        [sys.executable, "-c", LOADS_NUMBA, str(racks)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.split()[-1] == loaded


BUILDS = """
import sys
from fleetsim.bench.fleet import layout_for
from fleetsim.scenario import build, load_scenario
n = int(sys.argv[1])
grown = [f"site.layout.{k}={v}" for k, v in layout_for(n).items()]
built = build(load_scenario("warehouse", [*grown, f"robots[0].start.random={n}"]))
print("numba" in sys.modules)
built.sim.close()
"""


@pytest.mark.parametrize(("robots", "loaded"), [(100, "False"), (200, "True")])
def test_a_large_fleet_loads_numba_when_built_not_on_its_first_step(
    robots: int, loaded: str
) -> None:
    """Building a scenario of `MIN_ROWS` robots or more starts Numba's compiler then
    (`jit.prepare`), so the first step does not wait for it; the bundled 100-robot warehouse
    never loads it."""
    pytest.importorskip("numba")
    out = subprocess.run(
        [sys.executable, "-c", BUILDS, str(robots)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.split()[-1] == loaded
