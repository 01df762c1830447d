"""A building of three levels, each drawn at its own scale, turn and offset: every level's
nodes land where they are in the world (the oracle: the building is written from world
coordinates through known drawing transforms), a lift's vertices coincide across levels, and
the whole building is one site of several floors."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import yaml

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.geometry import Pose
from fleetsim.interfaces.rmf.nav_graph import nav_graph
from fleetsim.site import Site, load_rmf_building

from .drawn import ELEVATIONS, LIFT, PLACES, building


@pytest.fixture
def path(tmp_path: Path) -> Path:
    out = tmp_path / "tower.building.yaml"
    out.write_text(yaml.safe_dump(building(), sort_keys=False))
    return out


def test_every_level_is_where_the_world_has_it(path: Path) -> None:
    site = load_rmf_building(path)
    graph = site.graph
    assert site.level is None and graph.level_names == ["L1", "L2", "L3"]
    for level, places in PLACES.items():
        for name, xy in places.items():
            k = graph.node(name)
            assert graph.level_names[int(graph.level[k])] == level
            assert np.hypot(*(graph.xy[k] - xy)) < 0.01, (name, graph.xy[k], xy)
    lift_nodes = [graph.node(f"{level}:v2") for level in PLACES]
    for k in lift_nodes:  # the same lift's vertices coincide, on the cabin's centre
        assert np.hypot(*(graph.xy[k] - LIFT)) < 0.01
    lift = site.lifts[0]
    assert (lift.x, lift.y) == pytest.approx(LIFT, abs=0.01) and lift.levels == ["L1", "L2", "L3"]
    assert site.lift_of == {f"{level}:v2": "Lift1" for level in PLACES}
    assert site.elevations == ELEVATIONS
    assert site.placements["L2"].scale == pytest.approx(0.04)
    assert site.placements["L2"].rotation == pytest.approx(0.1)
    assert {d.name: d.level for d in site.doors} == {f"{v}_door": v for v in PLACES}
    assert "level L1: floors" in site.ignored and "crowd_sim" in site.ignored
    only = load_rmf_building(path, level="L2")  # one level: the same place
    assert only.graph.level_names == ["L2"] and only.level == "L2"
    assert only.graph.xy[only.graph.node("nurse")] == pytest.approx((6.0, -4.0), abs=0.01)


def test_a_level_without_shared_fiducials_is_said(path: Path) -> None:
    data = building()
    data["levels"]["L3"]["fiducials"] = data["levels"]["L3"]["fiducials"][:1]
    path.write_text(yaml.safe_dump(data))
    site = load_rmf_building(path)
    assert any("L3: fewer than two fiducials" in note for note in site.ignored)


def test_the_building_is_one_site_of_several_floors(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="fleetsim.site"):
        site = Site.from_building(path)
    said = [r.getMessage() for r in caplog.records if "not simulated" in r.getMessage()]
    assert len(said) == 1 and "level L1: floors" in said[0]
    walls = site.obstacles
    assert sorted(np.round(walls.centres[:, 2], 6).tolist()) == [1.0, 5.0, 9.0]  # on each floor
    assert site.level_at(4.2) == "L2" and site.node_elevation(site.graph.node("lab")) == 8.0
    with MultiRobotSimulationCore(SimulationParams(gui=False, target_rtf=0)) as sim:
        sim.set_site(site)
        ward = site.graph.xy[site.graph.node("ward_a")]
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(*ward, 4.0))
        robot = Agent.from_params(cube, sim)
        robot.go_to("nurse")
        sim.run_simulation(duration=20.0)
        pose = robot.get_pose()
        assert (pose.x, pose.y) == pytest.approx((6.0, -4.0), abs=0.05)
        assert pose.z == pytest.approx(4.0)  # drove on its own floor


def test_export_writes_every_level_the_lifts_and_the_doors(path: Path) -> None:
    site = Site.from_building(path)
    data = nav_graph(site.graph, "tower", site.doors, site.unnamed, site.lifts, site.lift_of)
    assert list(data["levels"]) == ["L1", "L2", "L3"]
    for level in PLACES:
        vertices = data["levels"][level]["vertices"]
        in_lift = [v for v in vertices if v[2].get("lift") == "Lift1"]
        assert len(in_lift) == 1 and in_lift[0][2]["name"] == ""
        assert in_lift[0][:2] == pytest.approx(LIFT, abs=0.01)
    assert data["lifts"]["Lift1"]["position"] == pytest.approx([*LIFT, 0.0], abs=0.01)
    assert data["lifts"]["Lift1"]["dims"] == [2.0, 2.0]
    assert data["doors"]["L2_door"]["map"] == "L2"
    ends = np.array(data["doors"]["L3_door"]["endpoints"])
    assert np.abs(ends - [[4.0, -7.0], [8.0, -7.0]]).max() < 0.01
