"""Sites from stages: the grid map of a floor plan against the same layout as a MovingAI map,
and the navigation graph of marked prims."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.site import Site
from fleetsim.usd.site import site_from_stage

from .stages import Gf, Sdf, Usd, UsdGeom, box_mesh

PLAN = [  # a MovingAI plan: racks (@) in a hall, 1 m cells
    "..........",
    ".@@@..@@@.",
    ".@@@..@@@.",
    "..........",
    ".@@@..@@@.",
    "..........",
]


def plan_stage(path: Path, turn: float = 0.0, up: str = "Z", mpu: float = 1.0) -> Path:
    """The plan as a stage: a floor slab under the hall, a rack mesh per blocked cell, each
    rack a 1 m cube (shrunk 1 cm inside its cell), all under a parent turned by `turn`
    degrees about its own up axis."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    unit = 1.0 / mpu
    hall = UsdGeom.Xform.Define(stage, "/Hall")
    if up == "Y":  # lay the plan out in Y-up coordinates: x, then -z for fleetsim's y
        hall.AddRotateXOp().Set(-90.0)
    hall.AddRotateZOp().Set(turn)
    rows = len(PLAN)
    box_mesh(stage, "/Hall/Floor", (0, 0, -0.2 * unit), (10 * unit, rows * unit, 0))
    for r, line in enumerate(PLAN):
        for c, char in enumerate(line):
            if char == "@":
                y = rows - 1 - r
                lo = ((c + 0.01) * unit, (y + 0.01) * unit, 0)
                hi = ((c + 0.99) * unit, (y + 0.99) * unit, 1.0 * unit)
                box_mesh(stage, f"/Hall/Rack_{r}_{c}", lo, hi)
    stage.GetRootLayer().Save()
    return path


@pytest.mark.parametrize(("up", "mpu"), [("Z", 1.0), ("Y", 0.01)])
def test_the_floor_plan_equals_the_same_layout_as_a_movingai_map(
    tmp_path: Path, up: str, mpu: float
) -> None:
    """Blocked cells, free cells, node positions and lanes equal the MovingAI map's."""
    (tmp_path / "plan.map").write_text(
        f"type octile\nheight {len(PLAN)}\nwidth {len(PLAN[0])}\nmap\n" + "\n".join(PLAN) + "\n"
    )
    want = Site.from_grid(tmp_path / "plan.map", cell_size=1.0)
    got = site_from_stage(plan_stage(tmp_path / "plan.usda", up=up, mpu=mpu), cell_size=1.0)
    assert got.grid is not None and want.grid is not None
    assert np.array_equal(got.grid.blocked, want.grid.blocked)
    assert got.grid.origin == (0.0, 0.0)
    assert np.allclose(got.graph.xy, want.graph.xy)
    assert list(got.graph.names) == list(want.graph.names)
    assert np.array_equal(got.graph.lane_from, want.graph.lane_from)
    assert np.array_equal(got.graph.lane_to, want.graph.lane_to)
    assert len(got.route("r0_c0", "r5_c9").nodes) == len(want.route("r0_c0", "r5_c9").nodes)


def test_a_turned_hall_blocks_the_cells_its_racks_cover(tmp_path: Path) -> None:
    """Turned by 30 degrees, each rack's footprint is tested against the cells exactly: a
    cell is blocked when a rack covers part of it, and the rack's centre's cell always is."""
    got = site_from_stage(plan_stage(tmp_path / "turned.usda", turn=30.0), cell_size=0.25)
    grid = got.grid
    assert grid is not None
    turn = np.radians(30.0)
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    rng = np.random.default_rng(0)
    for r, line in enumerate(PLAN):
        for c, char in enumerate(line):
            local = np.array([c + 0.5, len(PLAN) - 1 - r + 0.5])
            row, col = grid.cell_of(*(rot @ local))
            assert grid.blocked[row, col] == (char == "@"), (r, c)
    for _ in range(200):  # points well inside a rack are on blocked cells, and
        local = rng.uniform([1.1, 4.1], [3.9, 4.9])  # points of the aisle's middle are free
        assert grid.blocked[grid.cell_of(*(rot @ local))]
        local = rng.uniform([0.3, 2.4], [9.7, 2.6])  # (a turned cell reaches 0.34 m)
        assert not grid.blocked[grid.cell_of(*(rot @ local))]


def test_marked_prims_make_the_navigation_graph(tmp_path: Path) -> None:
    """fleetsim:node, fleetsim:name, fleetsim:lanes and fleetsim:one_way: nodes at the prims'
    origins with their properties, lanes both ways unless one way."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "marked.usda"))
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    places = {
        "Dock": ((0, 0), "waypoint"),
        "Charger": ((4, 0), "charger"),
        "Pick": ((4, 3), "pickup,parking"),
    }
    prims = {}
    for name, ((x, y), kind) in places.items():
        xform = UsdGeom.Xform.Define(stage, f"/Nav/{name}")
        xform.AddTranslateOp().Set(Gf.Vec3d(x, y, 0))
        prim = xform.GetPrim()
        prim.CreateAttribute("fleetsim:node", Sdf.ValueTypeNames.String).Set(kind)
        prims[name] = prim
    prims["Dock"].CreateAttribute("fleetsim:name", Sdf.ValueTypeNames.String).Set("dock_1")
    prims["Dock"].CreateRelationship("fleetsim:lanes").SetTargets(["/Nav/Charger"])
    prims["Charger"].CreateRelationship("fleetsim:lanes").SetTargets(["/Nav/Dock", "/Nav/Pick"])
    prims["Pick"].CreateRelationship("fleetsim:lanes").SetTargets(["/Nav/Dock"])
    prims["Pick"].CreateAttribute("fleetsim:one_way", Sdf.ValueTypeNames.Bool).Set(True)
    stage.GetRootLayer().Save()
    site = site_from_stage(tmp_path / "marked.usda")
    graph = site.graph
    assert sorted(graph.names) == ["Charger", "Pick", "dock_1"]
    k = {name: i for i, name in enumerate(graph.names)}
    assert np.allclose(graph.xy[k["Pick"]], (4, 3))
    assert graph.properties["charger"][k["Charger"]] and graph.properties["pickup"][k["Pick"]]
    assert graph.properties["parking_spot"][k["Pick"]]
    assert len(graph.route("dock_1", "Pick").nodes) == 3  # dock -> charger -> pick
    assert len(graph.route("Pick", "dock_1").nodes) == 2  # the one-way lane back


def test_wrong_marks_are_clear_errors(tmp_path: Path) -> None:
    stage = Usd.Stage.CreateNew(str(tmp_path / "bad.usda"))
    prim = UsdGeom.Xform.Define(stage, "/A").GetPrim()
    prim.CreateAttribute("fleetsim:node", Sdf.ValueTypeNames.String).Set("charging")
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match=r"bad.usda: /A: fleetsim:node = 'charging'"):
        site_from_stage(tmp_path / "bad.usda")
    prim.GetAttribute("fleetsim:node").Set("charger")
    prim.CreateRelationship("fleetsim:lanes").SetTargets(["/B"])
    stage.GetRootLayer().Save()
    with pytest.raises(ConfigError, match="points to /B, which is not a marked node"):
        site_from_stage(tmp_path / "bad.usda")
