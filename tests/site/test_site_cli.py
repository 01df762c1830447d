"""`fleetsim site show`: a site's summary, and its picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import fleetsim
from .test_movingai import SMALL
from .test_rmf_building import BUILDING


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
