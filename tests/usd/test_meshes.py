"""Mesh prims kept as meshes: their triangles (a concave static mesh) or their convex hull
collide, where a box would; the collision checks say so against the simulator's robots."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MultiRobotSimulationCore,
    SimulationParams,
)
from fleetsim.errors import ConfigError
from fleetsim.usd import load_usd, read_stage
from fleetsim.usd.meshes import fans

from .stages import Usd, UsdGeom


def l_shaped(path: Path) -> Path:
    """An L-shaped wall, 1 m tall, as one mesh of hexagon caps (one 6-corner face each, a
    polygon USD allows) and quad sides, in metres with Z up."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    mesh = UsdGeom.Mesh.Define(stage, "/Site/Corner")
    floor = [(0, 0), (4, 0), (4, 1), (1, 1), (1, 4), (0, 4)]
    mesh.CreatePointsAttr([(x, y, z) for z in (0, 1) for x, y in floor])
    counts, corners = [6, 6], [5, 4, 3, 2, 1, 0, 6, 7, 8, 9, 10, 11]
    for k in range(6):
        counts.append(4)
        corners += [k, (k + 1) % 6, (k + 1) % 6 + 6, k + 6]
    mesh.CreateFaceVertexCountsAttr(counts)
    mesh.CreateFaceVertexIndicesAttr(corners)
    stage.GetRootLayer().Save()
    return path


def contact_with_robot_in_the_notch(path: Path, **shapes: list[str]) -> bool:
    """A cube robot standing in the L's notch (inside the mesh's bounds, outside the L): does
    the collision check find it touching the corner?"""
    with MultiRobotSimulationCore(SimulationParams(target_rtf=0)) as sim:
        _, bodies = load_usd(sim, path, **shapes)
        spot = GridSpawnParams(x_min=2.5, x_max=3.0, y_min=2.5, y_max=3.0, spacing=1.0)
        AgentManager(sim).spawn_agents_grid(1, spot, AgentSpawnParams(urdf_path="simple_cube"))
        sim.step_once()
        corner = next(b for b in bodies if b.name == "/Site/Corner").handle
        return any(corner in pair for pair in sim.collisions.active_pairs)


def test_the_notch_of_an_l_is_free_only_when_its_triangles_collide(tmp_path: Path) -> None:
    path = l_shaped(tmp_path / "corner.usda")
    assert contact_with_robot_in_the_notch(path)  # a box: the notch is inside it
    assert contact_with_robot_in_the_notch(path, hulls=["/Site/*"])  # the hull fills it
    assert not contact_with_robot_in_the_notch(path, triangles=["/Site/*"])
    scene = read_stage(path, triangles=["/Site/Corner"])
    assert len(scene) == 0 and len(scene.meshes) == 1
    part = scene.meshes[0]
    assert part.concave and len(part.triangles) == 2 * 4 + 6 * 2  # two hexagon fans, six quads


def test_a_robot_against_the_l_itself_touches_it_as_triangles(tmp_path: Path) -> None:
    path = l_shaped(tmp_path / "corner.usda")
    with MultiRobotSimulationCore(SimulationParams(target_rtf=0)) as sim:
        _, bodies = load_usd(sim, path, triangles=["/Site/*"])
        spot = GridSpawnParams(x_min=1.1, x_max=1.4, y_min=2.0, y_max=2.4, spacing=1.0)
        AgentManager(sim).spawn_agents_grid(1, spot, AgentSpawnParams(urdf_path="simple_cube"))
        sim.step_once()  # the cube (0.4 m) reaches x = 0.9 to 1.3: into the L's upright arm
        assert any(bodies[0].handle in pair for pair in sim.collisions.active_pairs)


def test_fans_split_polygons() -> None:
    tris = fans(np.array([3, 4, 5]), np.arange(12))
    assert tris.tolist() == [[0, 1, 2], [3, 4, 5], [3, 5, 6], [7, 8, 9], [7, 9, 10], [7, 10, 11]]


def test_broken_meshes_are_clear_errors(tmp_path: Path) -> None:
    stage = Usd.Stage.CreateNew(str(tmp_path / "bad.usda"))
    mesh = UsdGeom.Mesh.Define(stage, "/Bad")
    mesh.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)])
    mesh.CreateFaceVertexCountsAttr([3, 3])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 0, 1, 9])
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="/Bad: its faces name points it does not have"):
        read_stage(tmp_path / "bad.usda", triangles=["*"])
    mesh.CreateFaceVertexCountsAttr([3, 4])
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="faceVertexCounts do not add up"):
        read_stage(tmp_path / "bad.usda", hulls=["*"])
