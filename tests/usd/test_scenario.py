"""OpenUSD in scenarios: the bundled twin run by the fleet manager, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetsim.scenario.builder import build
from fleetsim.scenario.loader import load_scenario
from fleetsim.state import CollisionMode

from ..conftest import fleetsim
from .stages import Usd, UsdGeom, box_mesh


def test_the_bundled_twin_builds_its_boxes_and_graph_from_the_stage() -> None:
    """248 boxes named by their prim paths (the floor seen by no check), the marked graph."""
    run = build(load_scenario("twin"))
    with run.sim as sim:
        names = {obj.name: obj for obj in sim.world.objects.values()}
        assert "/Twin/Racks[0]/Rack/Post0" in names and "/Twin/Walls/North" in names
        rows = sim.world.bodies
        modes = rows["collision_mode"]
        assert (modes == int(CollisionMode.STATIC)).sum() == 247  # racks, walls, conveyors
        floor = rows.row(names["/Twin/Floor"].handle)
        assert modes[floor] == int(CollisionMode.DISABLED)
        graph = sim.site.graph
        assert len(graph.names) == 62 and graph.properties["dropoff"].sum() == 5
        assert len(graph.route("park3", "drop2").nodes) > 5


def test_fleetsim_run_twin_does_tasks_without_collisions(tmp_path: Path) -> None:
    done = fleetsim("run", "twin", "--duration", "300", "--output", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["collisions"] == 0 and summary["stalls"] == 0, summary
    assert summary["tasks_completed"] >= 5 and summary["deadlocks_unresolved"] == 0, summary
    assert "not used by fleetsim: lights: 1 (/Twin/Sun)" in done.stderr


def scenario(folder: Path, usd: str) -> Path:
    path = folder / "s.yaml"
    path.write_text(
        "simulation: {target_rtf: 0}\n"
        f"environment:\n  usd: {usd}\n"
        "robots: [{model: mobile_robot, pose: {position: [0, 0, 0]}}]\n"
    )
    return path


def test_a_missing_or_broken_stage_names_the_scenario_line_and_key(tmp_path: Path) -> None:
    done = fleetsim("validate", str(scenario(tmp_path, "gone.usda")))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "s.yaml line 3: environment.usd (gone.usda)" in done.stderr, done.stderr
    assert "no such OpenUSD file" in done.stderr
    (tmp_path / "bad.usda").write_text('#usda 1.0\ndef Mesh "M" {\n  point3f[] points = [(0\n')
    done = fleetsim("validate", str(scenario(tmp_path, "bad.usda")))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "environment.usd (bad.usda)" in done.stderr and "USD cannot read it" in done.stderr


def test_without_usd_core_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    """A scenario with environment.usd where pxr cannot be imported: the install command."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "one.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    box_mesh(stage, "/Box", (2, 2, 0), (3, 3, 1))
    stage.GetRootLayer().Save()
    hidden = tmp_path / "hide"
    (hidden / "pxr").mkdir(parents=True)
    (hidden / "pxr" / "__init__.py").write_text("raise ImportError('no pxr here')\n")
    done = fleetsim(
        "validate", str(scenario(tmp_path, "one.usda")), env={"PYTHONPATH": str(hidden)}
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert 'pip install "fleetsim[usd]"' in done.stderr, done.stderr


@pytest.mark.parametrize("spelling", ["one.usda", "{file: one.usda, exclude: ['/Skip*']}"])
def test_both_spellings_build_the_stage(tmp_path: Path, spelling: str) -> None:
    stage = Usd.Stage.CreateNew(str(tmp_path / "one.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.SetStageUpAxis(stage, "Z")
    box_mesh(stage, "/Box", (2, 2, 0), (3, 3, 1))
    box_mesh(stage, "/Skipped", (5, 5, 0), (6, 6, 1))
    stage.GetRootLayer().Save()
    run = build(load_scenario(scenario(tmp_path, spelling)))
    with run.sim as sim:
        names = {obj.name for obj in sim.world.objects.values()}
        assert "/Box" in names
        assert ("/Skipped" in names) == (spelling == "one.usda")
