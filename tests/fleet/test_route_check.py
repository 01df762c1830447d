"""`check_routes` and `fleetsim site check`: robots drive random routes on a site; the check
reports arrivals, distance from the lanes, and contacts with walls and blocked cells."""

from __future__ import annotations

from pathlib import Path

import pytest

import fleetsim as fleetsim_package
from fleetsim import ConfigError
from fleetsim.fleet import check_routes
from fleetsim.site import Site

from ..conftest import fleetsim
from ..site.buildings import BUILDING
from ..site.test_movingai import SMALL

# The test building's second wall ends on the lane node at (15, -5): a robot there touches it.
CLEAR = BUILDING.replace("      - [1, 5, {}]\n", "")


def test_a_clear_building_passes(tmp_path: Path) -> None:
    path = tmp_path / "clear.building.yaml"
    path.write_text(CLEAR)
    report = check_routes(Site.from_building(path), robots=2, routes=6, seed=1)
    assert report.ok, report
    assert report.routes == report.reached == 6 and report.failures == []
    assert 0.0 <= report.max_lane_offset_m <= 0.1 and report.structure_contacts == 0
    assert report.sim_time_s > 20  # the routes are 10-30 m long: the robots really drove


def test_a_wall_on_a_lane_is_found_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "walled.building.yaml"
    path.write_text(BUILDING)
    report = check_routes(Site.from_building(path), robots=2, routes=6, seed=1)
    assert not report.ok and report.structure_contacts > 0
    assert all(abs(x - 15.0) < 1.0 and abs(y + 5.0) < 1.0 for _, x, y in report.contacts)
    result = fleetsim("site", "check", str(path), "--robots", "2", "--routes", "6", "--seed", "1")
    assert result.returncode == 1, result.stderr
    assert "touched the structure at (1" in result.stdout and result.stdout.endswith("FAILED\n")


def test_grid_cells_narrower_than_the_robot_are_found(tmp_path: Path) -> None:
    path = tmp_path / "small.map"
    path.write_text(SMALL)
    roomy = check_routes(Site.from_grid(path, cell_size=1.0), robots=2, routes=6, seed=2)
    assert roomy.ok and roomy.blocked_cell_entries == 0, roomy
    tight = check_routes(Site.from_grid(path, cell_size=0.3), robots=2, routes=6, seed=2)
    assert not tight.ok and tight.structure_contacts > 0
    ok = fleetsim("site", "check", str(path), "--robots", "2", "--routes", "4")
    assert ok.returncode == 0 and "reached          4 of 4" in ok.stdout
    assert "blocked cells    0 robot-steps" in ok.stdout and ok.stdout.endswith("ok\n")


def test_maps_with_their_own_obstacle_letters(tmp_path: Path) -> None:
    path = tmp_path / "shelves.map"
    path.write_text("type octile\nheight 3\nwidth 5\nmap\n.....\n.NSN.\n.....\n")
    with pytest.raises(ConfigError, match=r"line 6: unknown cell 'N' at column 1.*blocked='N'"):
        Site.from_grid(path)
    grid = Site.from_grid(path, blocked="NS").grid
    assert grid is not None and grid.blocked.sum() == 3 and len(grid.graph) == 12
    swamp = Site.from_grid(path, blocked="N").grid  # "S" stays the standard's free swamp
    assert swamp is not None and swamp.blocked.sum() == 2
    result = fleetsim("site", "show", str(path), "--blocked", "NS")
    assert result.returncode == 0 and "nodes 12;" in result.stdout


def test_bad_requests(tmp_path: Path) -> None:
    path = tmp_path / "small.map"
    path.write_text(SMALL)
    site = Site.from_grid(path)
    with pytest.raises(ConfigError, match="must be >= 1"):
        check_routes(site, robots=0)
    with pytest.raises(ConfigError, match="30 robots need 30 nodes; the site has 16"):
        check_routes(site, robots=30)
    result = fleetsim("site", "check", str(path), "--model", "no_such_robot")
    assert result.returncode == 2 and "no_such_robot" in result.stderr


def test_the_bundled_grid_map_passes() -> None:
    path = Path(fleetsim_package.__file__).parent / "scenarios" / "grid_warehouse.map"
    report = check_routes(Site.from_grid(path), robots=4, routes=8, seed=3)
    assert report.ok and report.routes == report.reached == 8, report
