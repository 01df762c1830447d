"""Open-RMF traffic-editor buildings: scale from measurements, image y down, lanes by graph."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.site.rmf_building import load_rmf_building

from .buildings import BUILDING

# 100 px = 5 m (two measurements agreeing), so 0.05 m per pixel; y points down in the image.


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "test.building.yaml"
    path.write_text(text)
    return path


def test_scale_orientation_and_named_places(tmp_path: Path) -> None:
    site = load_rmf_building(write(tmp_path, BUILDING))
    graph = site.graph
    assert site.level == "L1" and site.scale == pytest.approx(0.05)
    assert graph.names == ["dock_a", "v5", "pantry", "lounge"]  # graph 0 only
    assert graph.xy[graph.node("pantry")] == pytest.approx([15.0, -15.0])  # (300, 300) px
    assert graph.nodes_with("charger") == ["dock_a"] and graph.nodes_with("pickup") == ["pantry"]
    assert graph.nodes_with("dropoff") == ["lounge"]
    assert graph.nodes_with("holding_point") == ["pantry"]
    assert [(s.robot_name, s.robot_type, s.node) for s in site.spawns] == [
        ("bot1", "TinyRobot", "dock_a")
    ]
    assert site.docks == {"dock_a": "dock_a_station"}
    assert graph.speed_limit[0] == 0.5 and math.isinf(graph.speed_limit[1])
    assert graph.mutex.tolist() == [-1, -1, 0, -1]
    # pantry -> lounge is one way: lounge -> pantry goes round by the dock.
    back = graph.route("lounge", "pantry")
    assert [graph.names[k] for k in back.nodes] == ["lounge", "dock_a", "v5", "pantry"]
    assert site.walls[0] == pytest.approx([0, 0, 5.0, 0]) and site.wall_heights.tolist() == [
        2.0,
        2.5,
    ]


def test_the_other_graph_and_metric_files(tmp_path: Path) -> None:
    other = load_rmf_building(write(tmp_path, BUILDING), graph_idx=1)
    assert other.graph.names == ["pantry", "other_graph"]
    metric = BUILDING.replace(
        "coordinate_system: reference_image", "coordinate_system: cartesian_meters"
    )
    site = load_rmf_building(write(tmp_path, metric))
    assert site.scale == 1.0 and site.graph.xy[0] == pytest.approx([100.0, 100.0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            (
                "    measurements:\n      - [0, 1, {distance: [3, 5.0]}]\n"
                "      - [2, 3, {distance: [3, 10.0]}]\n",
                "",
            ),
            "no measurements",
        ),
        (("[6, 7, {bidirectional", "[6, 17, {bidirectional"), r"lanes\[2\] names vertex 17"),
        (("other_graph", "pantry"), "both named 'pantry'"),
        (("levels:", "stories:"), "no 'levels'"),
        (("reference_image", "wgs84"), "coordinate_system 'wgs84'"),
    ],
)
def test_bad_buildings_name_the_file_and_item(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    text = BUILDING.replace(*change)
    graph_idx = 1 if "pantry" in change[1] and "other" in change[0] else 0
    with pytest.raises(ConfigError, match=message):
        load_rmf_building(write(tmp_path, text), graph_idx=graph_idx)


def test_unknown_level_suggests(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no level 'L3'"):
        load_rmf_building(write(tmp_path, BUILDING), level="L3")
    with pytest.raises(ConfigError, match="L2: no lanes in graph 0"):
        load_rmf_building(write(tmp_path, BUILDING), level="L2")  # placed by L1: no scale needed
    with pytest.raises(ConfigError, match="L2: no measurements"):  # the reference's scale
        load_rmf_building(write(tmp_path, "reference_level_name: L2\n" + BUILDING))
    metric = BUILDING.replace("reference_image", "cartesian_meters")
    with pytest.raises(ConfigError, match="L2: no lanes in graph 0"):
        load_rmf_building(write(tmp_path, metric), level="L2")
    assert np.isfinite(load_rmf_building(write(tmp_path, BUILDING), level="L1").scale)
