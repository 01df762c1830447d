"""The scan's nearest hits against an exact oracle, against PyBullet's `rayTestBatch` on the
same scene, and compiled against NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.sensors import Beams, ShapeGrid, ray_shapes, raycast, scan

from .scenes import add_shapes, free_origins, oracle_ranges, pybullet_ranges

BEAMS = Beams(angle_min=-math.pi, increment=2 * math.pi / 360, count=360, range_max=12.0)


def scene_scan(
    sim: MultiRobotSimulationCore, origins: np.ndarray, yaws: np.ndarray, beams: Beams = BEAMS
) -> np.ndarray:
    shapes = ray_shapes(sim.world.bodies)
    grid = ShapeGrid.build(shapes, 2.0)
    return scan(shapes, grid, origins, yaws, np.full(len(origins), -1), beams)


def built(seed: int, kinds: tuple[str, ...], count: int = 50) -> MultiRobotSimulationCore:
    sim = MultiRobotSimulationCore(SimulationParams(seed=0))
    add_shapes(sim, seed, count, kinds)
    sim.step_once()
    return sim


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scan_equals_the_exact_oracle(seed: int) -> None:
    """Turned boxes, spheres and upright cylinders: every beam's hit as the oracle has it."""
    with built(seed, ("box", "sphere", "cylinder")) as sim:
        origins = free_origins(sim, seed, 12)
        yaws = np.random.default_rng(seed).uniform(-3, 3, len(origins))
        beams = Beams(-2.0, 4.0 / 90, 91, 12.0)  # a 229 degree field of view
        ours, exact = (
            scene_scan(sim, origins, yaws, beams),
            oracle_ranges(sim, origins, yaws, beams),
        )
    assert np.isfinite(ours).sum() > 300  # (the scene is seen)
    np.testing.assert_array_equal(np.isfinite(ours), np.isfinite(exact))
    hit = np.isfinite(exact)
    np.testing.assert_allclose(ours[hit], exact[hit], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_scan_agrees_with_pybullet(seed: int) -> None:
    """Tilted boxes too. Every beam that is not within 2 mm of grazing a shape (its answer
    the same with the sensor 2 mm higher or lower or turned by 2 mrad) hits what PyBullet's
    `rayTestBatch` hits, at the same distance within PyBullet's own tolerance: 1 mm for
    almost all, a few mm where a beam meets a surface at a shallow angle or a corner (where
    the exact oracle sides with the scan)."""
    with built(seed, ("box", "tilted", "sphere", "cylinder"), 60) as sim:
        origins = free_origins(sim, seed, 30)
        yaws = np.random.default_rng(seed).uniform(-3, 3, len(origins))
        ours = scene_scan(sim, origins, yaws)
        theirs = pybullet_ranges(sim, origins, yaws, BEAMS)
        nudged = [
            scene_scan(sim, origins + np.array([0, 0, dz]), yaws + turn)
            for dz in (-2e-3, 0.0, 2e-3)
            for turn in (-2e-3, 0.0, 2e-3)
        ]
    hit = np.isfinite(ours)
    with np.errstate(invalid="ignore"):
        stable = np.all(
            [
                (np.isfinite(n) == hit) & np.where(hit, np.abs(n - ours) < 0.05, True)
                for n in nudged
            ],
            axis=0,
        )
    assert stable.mean() > 0.95 and hit.sum() > 3000
    np.testing.assert_array_equal(hit[stable], np.isfinite(theirs)[stable])
    both = stable & hit
    error = np.abs(ours[both] - theirs[both])
    assert np.mean(error <= 1e-3) > 0.9
    assert error.max() < 0.025


def test_compiled_and_numpy_give_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    with built(4, ("box", "tilted", "sphere", "cylinder"), 80) as sim:
        origins = free_origins(sim, 4, 70)  # (two halves on two threads, compiled)
        yaws = np.random.default_rng(4).uniform(-3, 3, len(origins))
        compiled = scene_scan(sim, origins, yaws)
        monkeypatch.setattr(raycast, "compiled", lambda function: None)
        plain = scene_scan(sim, origins, yaws)
    assert np.isfinite(compiled).sum() > 5000
    np.testing.assert_array_equal(compiled, plain)


def test_a_sensors_own_body_and_what_it_carries_are_not_seen() -> None:
    with built(5, ("box",), 0) as sim:
        from fleetsim import Pose, ShapeParams, SimObject, SimObjectSpawnParams

        box = ShapeParams("box", half_extents=(0.5, 0.5, 0.5))
        params = SimObjectSpawnParams(visual_shape=box, collision_shape=box)
        robot = SimObject.from_params(params, sim)
        wall = SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=box, collision_shape=box, initial_pose=Pose.from_xyz(3, 0, 0.5)
            ),
            sim,
        )
        load = SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=box, collision_shape=box, initial_pose=Pose.from_xyz(1.2, 0, 0.5)
            ),
            sim,
        )
        robot.attach_object(load)
        sim.step_once()
        shapes = ray_shapes(sim.world.bodies)
        grid = ShapeGrid.build(shapes, 2.0)
        beams = Beams(0.0, 0.1, 1, 10.0)
        origin = np.array([[0.0, 0.0, 0.5]])
        mine = scan(shapes, grid, origin, np.zeros(1), np.array([robot.handle]), beams)
        outside = origin + np.array([0.6, 0, 0])
        nobody = scan(shapes, grid, outside, np.zeros(1), np.array([-1]), beams)
        assert wall.handle >= 0
    assert mine[0, 0] == pytest.approx(2.5)  # through its own box and its load, to the wall
    assert nobody[0, 0] == pytest.approx(0.1)  # from outside: the load, 0.1 m ahead


def test_robots_are_met_as_their_footprints_never_later_than_their_links() -> None:
    """`mobile_robot`s (a 0.6 x 0.4 base above two wheels and a caster) are met as their
    footprint boxes (0.6 x 0.516, wheels included): a beam is stopped at the box, never later
    than PyBullet stops it at the robot's own links (within PyBullet's 1.5 cm), and at the
    bundled lidar's height (18 cm, the base's) few beams that meet a box pass the robot in
    PyBullet (those through the strips beside the base, above the wheels)."""
    rng = np.random.default_rng(7)
    with MultiRobotSimulationCore(SimulationParams(seed=0)) as sim:
        for x, y, yaw in zip(*rng.uniform(-6, 6, (2, 25)), rng.uniform(-3, 3, 25), strict=True):
            Agent.from_params(
                AgentSpawnParams("mobile_robot", initial_pose=Pose.from_yaw(x, y, 0, yaw)), sim
            )
        sim.step_once()
        sim.world.realize(np.arange(len(sim.world.bodies)))  # (their links in PyBullet)
        lo, hi = sim.world.bodies["aabb_min"] - 0.1, sim.world.bodies["aabb_max"] + 0.1
        origins = [
            p
            for p in np.column_stack((rng.uniform(-8, 8, (200, 2)), np.full(200, 0.18)))
            if not ((lo <= p) & (p <= hi)).all(axis=1).any()
        ][:30]
        origins = np.array(origins)
        yaws = rng.uniform(-3, 3, len(origins))
        ours = scene_scan(sim, origins, yaws)
        theirs = pybullet_ranges(sim, origins, yaws, BEAMS)
    met = np.isfinite(ours)
    assert met.sum() > 3000 and not (np.isfinite(theirs) & ~met).any()  # none passes a box
    both = met & np.isfinite(theirs)
    assert (theirs[both] >= ours[both] - 0.015).all()  # never met later than PyBullet does
    assert (~np.isfinite(theirs[met])).mean() < 0.1  # the strips beside the base
    assert np.median(theirs[both] - ours[both]) < 0.1
