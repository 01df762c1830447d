"""Stages built with pxr itself for the USD tests."""

from __future__ import annotations

from pathlib import Path

import pytest

pxr = pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom, UsdLux, UsdShade, UsdValidation, Vt  # noqa: E402


def box_mesh(stage: Usd.Stage, path: str, lo: tuple, hi: tuple) -> UsdGeom.Mesh:
    """A 12-triangle box mesh from lo to hi."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    points = [(x, y, z) for z in (z0, z1) for y in (y0, y1) for x in (x0, x1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    mesh.CreatePointsAttr(points)
    mesh.CreateFaceVertexCountsAttr([3] * len(tris))
    mesh.CreateFaceVertexIndicesAttr([i for t in tris for i in t])
    return mesh


def nested(path: Path, up: str = "Z", meters_per_unit: float = 1.0) -> Path:
    """Nested transforms with rotations and scales, a cube and a cylinder, a light, a
    material, a physics schema, a guide mesh."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    world = UsdGeom.Xform.Define(stage, "/World")
    world.AddTranslateOp().Set(Gf.Vec3d(3, -2, 1))
    world.AddRotateXYZOp().Set(Gf.Vec3f(0, 0, 30))
    shelf = UsdGeom.Xform.Define(stage, "/World/Shelf")
    shelf.AddTranslateOp().Set(Gf.Vec3d(1, 2, 0))
    shelf.AddRotateZOp().Set(45.0)
    shelf.AddScaleOp().Set(Gf.Vec3f(2, 1, 0.5))
    box_mesh(stage, "/World/Shelf/Board", (-1, -0.5, 0), (1, 0.5, 0.2))
    tilted = UsdGeom.Cube.Define(stage, "/World/Tilted")
    tilted.CreateSizeAttr(0.5)
    tilted.AddTranslateOp().Set(Gf.Vec3d(-2, 0, 1))
    tilted.AddRotateXYZOp().Set(Gf.Vec3f(20, 35, 10))
    pillar = UsdGeom.Cylinder.Define(stage, "/World/Pillar")
    pillar.CreateRadiusAttr(0.3)
    pillar.CreateHeightAttr(3.0)
    pillar.AddTranslateOp().Set(Gf.Vec3d(0, -4, 1.5))
    guide = box_mesh(stage, "/World/Guide", (0, 0, 0), (1, 1, 1))
    guide.CreatePurposeAttr(UsdGeom.Tokens.guide)
    UsdLux.SphereLight.Define(stage, "/World/Lamp")
    material = UsdShade.Material.Define(stage, "/World/Looks/Steel")
    UsdShade.MaterialBindingAPI.Apply(tilted.GetPrim()).Bind(material)
    tilted.GetPrim().AddAppliedSchema("PhysicsCollisionAPI")
    stage.GetRootLayer().Save()
    return path


def racks(path: Path, count: int, up: str = "Z", meters_per_unit: float = 1.0) -> Path:
    """A point instancer of `count` racks (a prototype of two box meshes under an Xform with
    its own transform), turned and scaled per instance, under a moved parent."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    parent = UsdGeom.Xform.Define(stage, "/Site")
    parent.AddTranslateOp().Set(Gf.Vec3d(10, 5, 0))
    instancer = UsdGeom.PointInstancer.Define(stage, "/Site/Racks")
    rack = UsdGeom.Xform.Define(stage, "/Site/Racks/Prototypes/Rack")
    rack.AddTranslateOp().Set(Gf.Vec3d(0, 0, 0.1))
    box_mesh(stage, "/Site/Racks/Prototypes/Rack/Frame", (-0.5, -0.4, 0), (0.5, 0.4, 2))
    box_mesh(stage, "/Site/Racks/Prototypes/Rack/Shelf", (-0.45, -0.35, 0.9), (0.45, 0.35, 1))
    instancer.CreatePrototypesRel().SetTargets([rack.GetPath()])
    side = int(count**0.5) + 1
    instancer.CreateProtoIndicesAttr([0] * count)
    instancer.CreatePositionsAttr([(2.0 * (k % side), 1.5 * (k // side), 0) for k in range(count)])
    turns = [
        Gf.Quath(Gf.Rotation(Gf.Vec3d(0, 0, 1), 90.0 * (k % 4)).GetQuat()) for k in range(count)
    ]
    instancer.CreateOrientationsAttr(turns)
    instancer.CreateScalesAttr([(1, 1, 1 + (k % 3) * 0.5) for k in range(count)])
    stage.GetRootLayer().Save()
    return path


def world_ranges(path: Path) -> dict[str, tuple]:
    """Each geometric prim's world range (min, max) from USD's own BBoxCache, in the stage's
    units and axes; a point instancer's per instance (all its prototype), named
    `<instancer>[k]`."""
    stage = Usd.Stage.Open(str(path))
    cache = UsdGeom.BBoxCache(Usd.TimeCode.Default(), ["default", "render"])
    out: dict[str, tuple] = {}
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.PointInstancer):
            instancer = UsdGeom.PointInstancer(prim)
            n = len(instancer.GetProtoIndicesAttr().Get())
            bounds = cache.ComputePointInstanceWorldBounds(instancer, list(range(n)))
            for k, bound in enumerate(bounds):
                r = bound.ComputeAlignedRange()
                out[f"{prim.GetPath()}[{k}]"] = (tuple(r.GetMin()), tuple(r.GetMax()))
        elif (
            prim.IsA(UsdGeom.Gprim)
            and "/Prototypes/" not in str(prim.GetPath())
            and UsdGeom.Imageable(prim).ComputePurpose() in ("default", "render")
        ):
            r = cache.ComputeWorldBound(prim).ComputeAlignedRange()
            out[str(prim.GetPath())] = (tuple(r.GetMin()), tuple(r.GetMax()))
    return out


__all__ = [
    "Gf",
    "Sdf",
    "Usd",
    "UsdGeom",
    "UsdValidation",
    "Vt",
    "box_mesh",
    "nested",
    "racks",
    "world_ranges",
]
