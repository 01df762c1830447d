"""`fleetsim site show`: a site's summary, and its picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import fleetsim
from .buildings import BUILDING
from .maps import SMALL

SAME = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]


def test_show_a_building_and_draw_it(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "test.building.yaml"
    path.write_text(BUILDING)
    png = tmp_path / "site.png"
    result = fleetsim("site", "show", str(path), "--png", str(png))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "nodes 4; lanes 4 (1 one-way)" in out and "obstacles 2 static boxes" in out
    assert "charger: dock_a" in out and "robot bot1 (TinyRobot) starts at dock_a" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_show_a_grid_map_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "small.map"
    path.write_text(SMALL)
    result = fleetsim("site", "show", str(path), "--cell-size", "0.5")
    assert result.returncode == 0, result.stderr
    assert "nodes 16;" in result.stdout and "extent x 0.25..2.75 m" in result.stdout
    (tmp_path / "bad.map").write_text("type octile\nheight 2\nwidth 2\nmap\n..\n")
    bad = fleetsim("site", "show", str(tmp_path / "bad.map"))
    assert bad.returncode == 2 and "height 2, but there are 1 rows" in bad.stderr


def test_export_an_rmf_nav_graph(tmp_path: Path) -> None:
    import yaml

    from fleetsim.site import Site

    path = tmp_path / "test.building.yaml"
    path.write_text(BUILDING)
    out = tmp_path / "nav.yaml"
    result = fleetsim("site", "export", str(path), "--format", "rmf-nav-graph", "-o", str(out))
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(out.read_text())
    site = Site.from_file(path)
    g = site.graph
    (level,) = data["levels"].values()
    vertices, lanes = level["vertices"], level["lanes"]
    assert site.unnamed == {"v5"}  # RMF writes an empty name for a vertex without one
    assert [v[2]["name"] for v in vertices] == ["" if n == "v5" else n for n in g.names]
    assert [v[:2] for v in vertices] == g.xy.tolist()
    assert [v[2]["is_charger"] for v in vertices] == g.properties["charger"].tolist()
    directed = {(g.names[a], g.names[b]) for a, b in zip(g.lane_from, g.lane_to, strict=True)}
    directed |= {
        (g.names[b], g.names[a])
        for a, b, two in zip(g.lane_from, g.lane_to, g.bidirectional, strict=True)
        if two
    }
    assert {(g.names[a], g.names[b]) for a, b, _ in lanes} == directed
    assert len(lanes) == len(directed)  # one-way lanes once, two-way lanes both ways
    bad = fleetsim("site", "export", str(path), "--format", "gazebo", "-o", str(out))
    assert bad.returncode == 2 and "unknown format 'gazebo'" in bad.stderr


def test_export_an_rmf_fleet_config(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "test.building.yaml"
    path.write_text(BUILDING)
    out = tmp_path / "config.yaml"
    result = fleetsim(
        "site",
        "export",
        str(path),
        "--format",
        "rmf-fleet-config",
        "-o",
        str(out),
        "--fleet-manager",
        "http://127.0.0.1:22999",
    )
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(out.read_text())
    fleet = config["rmf_fleet"]
    assert fleet["name"] == "TinyRobot" and fleet["robots"] == {"bot1": {"charger": "dock_a"}}
    assert fleet["limits"]["linear"] == [1.0, 1.0]  # fleetsim's defaults
    assert 0.1 < fleet["profile"]["footprint"] < 1.0  # measured from the model's box
    manager = config["fleet_manager"]  # what rmf_demos' fleet adapter reads
    assert (manager["ip"], manager["port"], manager["user"], manager["password"]) == (
        "127.0.0.1",
        22999,
        "",
        "",
    )
    assert manager["prefix"] == "http://127.0.0.1:22999"  # RMF's tutorial template reads this
    assert config["reference_coordinates"] == {"L1": {"rmf": SAME, "robot": SAME}}
    wrong = fleetsim(
        "site",
        "export",
        str(path),
        "--format",
        "rmf-fleet-config",
        "-o",
        str(out),
        "--fleet-manager",
        "127.0.0.1",
    )
    assert wrong.returncode == 2 and "expected http://HOST:PORT" in wrong.stderr
    grid = tmp_path / "small.map"
    grid.write_text(SMALL)
    bad = fleetsim("site", "export", str(grid), "--format", "rmf-fleet-config", "-o", str(out))
    assert bad.returncode == 2 and "the site places no robots" in bad.stderr
