"""Stages read into boxes: every box against USD's own computed world bounds (BBoxCache)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from fleetsim.collision.aabb import world_aabbs
from fleetsim.errors import AssetNotFoundError, ConfigError
from fleetsim.usd import read_stage
from fleetsim.usd.boxes import stage_frame

from .stages import Usd, UsdGeom, Vt, box_mesh, nested, racks, world_ranges


def world_boxes(scene) -> tuple[np.ndarray, np.ndarray]:
    """The world AABBs (lo, hi) of the scene's turned boxes."""
    half = scene.half_extents
    return world_aabbs(scene.centres, scene.orientations, -half, half)


def expected(r: tuple, up: str, mpu: float) -> tuple[np.ndarray, np.ndarray]:
    """A BBoxCache range in fleetsim's metres and Z up."""
    frame = stage_frame(mpu, up)
    corners = np.array([[r[(c >> a) & 1][a] for a in range(3)] + [1.0] for c in range(8)])
    world = (corners @ frame)[:, :3]
    return world.min(axis=0), world.max(axis=0)


@pytest.mark.parametrize(("up", "mpu"), [("Z", 1.0), ("Y", 1.0), ("Z", 0.01), ("Y", 0.01)])
def test_nested_transforms_match_usds_own_bounds(tmp_path: Path, up: str, mpu: float) -> None:
    """Nested Xforms with turns and scales, a turned cube, a cylinder: each box's world AABB is
    the one BBoxCache computes, converted to metres and Z up, within 1 mm; the guide mesh is
    left out by purpose; the light, material and physics schema are reported."""
    path = nested(tmp_path / "nested.usda", up, mpu)
    scene = read_stage(path)
    ranges = world_ranges(path)
    assert sorted(scene.names) == sorted(n for n in ranges if n != "/World/Guide")
    assert scene.skipped == 1  # the guide
    lo, hi = world_boxes(scene)
    for k, name in enumerate(scene.names):
        want_lo, want_hi = expected(ranges[name], up, mpu)
        assert np.allclose(lo[k], want_lo, atol=1e-3), name
        assert np.allclose(hi[k], want_hi, atol=1e-3), name
    assert scene.unused["lights"] == ["/World/Lamp"]
    assert "/World/Looks/Steel" in scene.unused["materials"]
    assert scene.unused["physics schemas"] == ["/World/Tilted"]
    shelf = scene.names.index("/World/Shelf/Board")  # scaled 2 x 1 x 0.5 along its own axes
    assert np.allclose(np.sort(scene.half_extents[shelf]), np.sort([2.0, 0.5, 0.05]) * mpu)


@pytest.mark.parametrize(("up", "mpu"), [("Z", 1.0), ("Y", 0.01)])
def test_point_instancer_of_thousands_of_racks(tmp_path: Path, up: str, mpu: float) -> None:
    """3,000 racks from one point instancer (turned, scaled per instance, under a moved parent;
    the prototype's root with its own transform): two boxes each, and each rack's boxes
    together fill exactly the world bound BBoxCache computes for that instance (1 mm)."""
    n = 3000
    path = racks(tmp_path / "racks.usdc", n, up, mpu)
    scene = read_stage(path)
    assert len(scene) == 2 * n
    ranges = world_ranges(path)
    lo, hi = world_boxes(scene)
    names = np.array([name.split("]")[0] + "]" for name in scene.names])
    for k in (0, 1, 2, 3, 1234, n - 1):
        mine = names == f"/Site/Racks[{k}]"
        assert mine.sum() == 2
        want_lo, want_hi = expected(ranges[f"/Site/Racks[{k}]"], up, mpu)
        assert np.allclose(lo[mine].min(axis=0), want_lo, atol=1e-3), k
        assert np.allclose(hi[mine].max(axis=0), want_hi, atol=1e-3), k
    assert "/Site/Racks[7]/Rack/Shelf" in scene.names


def test_filters_by_path(tmp_path: Path) -> None:
    """include and exclude patterns pick prims by path; what they leave out is counted."""
    path = nested(tmp_path / "nested.usda")
    scene = read_stage(path, include=["/World/*"], exclude=["/World/Shelf/*"])
    assert sorted(scene.names) == ["/World/Pillar", "/World/Tilted"]
    assert scene.skipped == 2
    both = read_stage(path, purposes=["default", "render", "guide"])
    assert "/World/Guide" in both.names


def test_instanceable_references_are_read_through_their_proxies(tmp_path: Path) -> None:
    """A rack in its own file referenced three times as instanceable: three boxes, each at its
    reference's place."""
    asset = Usd.Stage.CreateNew(str(tmp_path / "rack.usda"))
    UsdGeom.Xform.Define(asset, "/Rack")
    box_mesh(asset, "/Rack/Frame", (0, 0, 0), (1, 1, 2))
    asset.SetDefaultPrim(asset.GetPrimAtPath("/Rack"))
    asset.GetRootLayer().Save()
    stage = Usd.Stage.CreateNew(str(tmp_path / "aisle.usda"))
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    for k in range(3):
        xform = UsdGeom.Xform.Define(stage, f"/Aisle/Rack{k}")
        xform.AddTranslateOp().Set((2.0 * k, 0, 0))
        xform.GetPrim().GetReferences().AddReference("rack.usda")
        xform.GetPrim().SetInstanceable(True)
    stage.GetRootLayer().Save()
    scene = read_stage(tmp_path / "aisle.usda")
    assert sorted(scene.names) == [f"/Aisle/Rack{k}/Frame" for k in range(3)]
    order = np.argsort(scene.names)
    assert np.allclose(scene.centres[order], [[0.5 + 2 * k, 0.5, 1.0] for k in range(3)])


def test_a_stage_without_units_is_in_centimetres_with_y_up(tmp_path: Path) -> None:
    """USD's own fallbacks: no metersPerUnit is centimetres, no upAxis is Y."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "bare.usda"))
    box_mesh(stage, "/Box", (0, 0, 0), (100, 200, 300))
    stage.GetRootLayer().Save()
    scene = read_stage(tmp_path / "bare.usda")
    assert (scene.meters_per_unit, scene.up_axis) == (0.01, "Y")
    assert np.allclose(world_boxes(scene)[1], [[1.0, 0.0, 2.0]])  # y up -> z; z -> -y
    assert np.allclose(world_boxes(scene)[0], [[0.0, -3.0, 0.0]])


def test_broken_files_are_clear_errors(tmp_path: Path) -> None:
    """A missing file, a wrong suffix, a file USD cannot parse, a missing reference and a
    reference cycle each stop with the file's name and what is wrong."""
    with pytest.raises(AssetNotFoundError, match="no such OpenUSD file"):
        read_stage(tmp_path / "gone.usda")
    (tmp_path / "plan.txt").write_text("x")
    with pytest.raises(ConfigError, match="not an OpenUSD file"):
        read_stage(tmp_path / "plan.txt")
    bad = tmp_path / "bad.usda"
    bad.write_text('#usda 1.0\ndef Xform "World" {\n  double3 xformOp:translate = (1, 2\n')
    with pytest.raises(ConfigError, match=r"bad\.usda: USD cannot read it"):
        read_stage(bad)
    stage = Usd.Stage.CreateNew(str(tmp_path / "missing.usda"))
    stage.DefinePrim("/World").GetReferences().AddReference("nowhere.usda")
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match=r"missing\.usda: the stage does not compose"):
        read_stage(tmp_path / "missing.usda")
    for name, other in (("a.usda", "b.usda"), ("b.usda", "a.usda")):
        stage = Usd.Stage.CreateNew(str(tmp_path / name))
        stage.DefinePrim("/X").GetReferences().AddReference(other, "/X")
        stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="does not compose"):
        read_stage(tmp_path / "a.usda")


def test_unused_kinds_are_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """One warning names what fleetsim does not use, by kind, with the prims."""
    with caplog.at_level(logging.WARNING, logger="fleetsim.usd"):
        read_stage(nested(tmp_path / "nested.usda"))
    told = [r.getMessage() for r in caplog.records if "not used by fleetsim" in r.getMessage()]
    assert len(told) == 1
    assert "lights: 1 (/World/Lamp)" in told[0] and "physics schemas" in told[0]


def test_a_stage_of_a_billion_boxes_is_refused_with_the_estimate(tmp_path: Path) -> None:
    """A million instances of a prototype of a thousand meshes: refused before the instances'
    transforms are read, saying how much memory it would need."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "huge.usdc"))
    instancer = UsdGeom.PointInstancer.Define(stage, "/Huge")
    UsdGeom.Xform.Define(stage, "/Huge/Prototypes/Shelf")
    for k in range(1000):
        box_mesh(stage, f"/Huge/Prototypes/Shelf/Board{k}", (0, 0, k), (1, 1, k + 0.5))
    instancer.CreatePrototypesRel().SetTargets(["/Huge/Prototypes/Shelf"])
    instancer.CreateProtoIndicesAttr(Vt.IntArray.FromNumpy(np.zeros(1_000_000, np.int32)))
    instancer.CreatePositionsAttr(Vt.Vec3fArray.FromNumpy(np.zeros((1_000_000, 3), np.float32)))
    stage.GetRootLayer().Save()
    with pytest.raises(
        ConfigError, match=r"1,000,000,000 boxes from .*huge.usdc: /Huge would need about"
    ):
        read_stage(tmp_path / "huge.usdc")


def test_an_instancer_with_too_few_positions_is_a_clear_error(tmp_path: Path) -> None:
    stage = Usd.Stage.CreateNew(str(tmp_path / "short.usda"))
    instancer = UsdGeom.PointInstancer.Define(stage, "/Racks")
    box_mesh(stage, "/Racks/Prototypes/Box", (0, 0, 0), (1, 1, 1))
    instancer.CreatePrototypesRel().SetTargets(["/Racks/Prototypes/Box"])
    instancer.CreateProtoIndicesAttr([0, 0, 0])
    instancer.CreatePositionsAttr([(0, 0, 0), (2, 0, 0)])
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="/Racks: 3 protoIndices but positions"):
        read_stage(tmp_path / "short.usda")
    instancer.CreateProtoIndicesAttr([0, 1, 0])
    instancer.CreatePositionsAttr([(0, 0, 0), (2, 0, 0), (4, 0, 0)])
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="protoIndices name prototypes 0 to 1, but it has 1"):
        read_stage(tmp_path / "short.usda")


def test_every_prim_left_is_reported_by_kind(tmp_path: Path) -> None:
    """Cameras, prims of types fleetsim does not know and geometry with nothing in it are
    listed, as lights and materials are."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "odd.usda"))
    UsdGeom.Xform.Define(stage, "/W")
    UsdGeom.Camera.Define(stage, "/W/Cam")
    stage.DefinePrim("/W/Robot", "FactoryRobot")
    UsdGeom.Mesh.Define(stage, "/W/Empty")
    UsdGeom.Cube.Define(stage, "/W/Box")
    stage.GetRootLayer().Save()
    scene = read_stage(tmp_path / "odd.usda")
    assert scene.names == ["/W/Box"]
    assert scene.unused == {
        "cameras": ["/W/Cam"],
        "other prims (FactoryRobot)": ["/W/Robot"],
        "geometry without extent": ["/W/Empty"],
    }
