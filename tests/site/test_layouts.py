"""Generated warehouse sites: what they hold, that every place is reachable in the one-way
circulation, that racks stay clear of the lanes, and clear errors for bad numbers."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from fleetsim import ConfigError
from fleetsim.site.layouts import site_layout, warehouse_layout

from ..conftest import fleetsim, scenario


def test_a_warehouse_has_racks_aisles_stations_and_parking() -> None:
    site = warehouse_layout(aisles=4, aisle_length=10, node_spacing=2, stations=3, parking_rows=2)
    g = site.graph
    assert len(site.obstacles) == 5  # a rack either side of every aisle
    assert len(g.nodes_with("pickup")) == 4 * 4  # aisle nodes between the cross lanes
    assert g.nodes_with("dropoff") == ["drop_0", "drop_1", "drop_2"]
    assert len(g.nodes_with("parking_spot")) == 7 * 2 and len(g.nodes_with("charger")) == 7
    assert g.xy[g.node("aisle2_3")].tolist() == pytest.approx([2 * 3.2, 6.0])


def test_stations_are_loops_off_the_top_lane_in_its_direction() -> None:
    g = warehouse_layout(aisles=3, aisle_length=10, stations=2).graph
    drop = g.node("drop_0")
    into = g.lane_to[g.lane_from == drop].tolist() + g.lane_from[g.lane_to == drop].tolist()
    assert sorted(g.names[n] for n in into) == ["top_0", "top_1"]
    assert list(g.route("top_1", "top_0").nodes) == [g.node("top_1"), g.node("top_0")]
    assert g.names[g.route("top_1", "drop_0").nodes[-2]] == "top_1"  # entered from the right
    assert g.names[g.route("drop_0", "top_0").nodes[0]] == "drop_0"
    assert (~g.bidirectional[(g.lane_from == drop) | (g.lane_to == drop)]).all()
    with pytest.raises(ConfigError, match=r"stations: 5 do not fit above 3 aisles \(at most 4\)"):
        warehouse_layout(aisles=3, stations=5)


def test_blocks_of_racks_with_cross_lanes_between() -> None:
    site = warehouse_layout(aisles=3, aisle_length=10, blocks=3, stations=1, parking_rows=1)
    g, o = site.graph, site.obstacles
    assert len(o) == 3 * 4 and len(g.nodes_with("pickup")) == 3 * 3 * 4
    assert g.xy[g.node("cross1_0")].tolist() == [0.0, 10.0]
    assert g.xy[g.node("top_4")].tolist() == pytest.approx([2 * 3.2, 30.0])
    assert g.xy[g.node("aisle1_6")].tolist() == pytest.approx([3.2, 12.0])  # second block
    assert "aisle1_5" not in g.names  # that is cross1_2
    # Racks fill each block, clear of its cross lanes by rack_margin (1.5 m).
    lo = o.centres[:, 1] - o.half_extents[:, 1]
    hi = o.centres[:, 1] + o.half_extents[:, 1]
    assert sorted(set(lo.round(6))) == [1.5, 11.5, 21.5] and sorted(set(hi.round(6))) == [
        8.5,
        18.5,
        28.5,
    ]
    # The middle cross lane runs right to left, the bottom one left to right.
    assert g.route("cross1_4", "cross1_0").nodes[1] == g.node("cross1_3")
    assert g.route("bottom_0", "bottom_4").nodes[1] == g.node("bottom_1")


@pytest.mark.parametrize(
    ("aisles", "blocks", "one_way"),
    [
        (1, 1, True),
        (2, 1, True),
        (5, 1, True),
        (4, 1, False),
        (1, 2, True),
        (4, 2, True),
        (5, 3, True),
        (6, 4, True),
    ],
)
def test_every_node_reaches_every_other(aisles: int, blocks: int, one_way: bool) -> None:
    g = warehouse_layout(aisles=aisles, aisle_length=8, blocks=blocks, one_way=one_way).graph
    for a, b in itertools.product(range(len(g)), repeat=2):
        if a != b:
            g.route(a, b)  # raises RouteError if the circulation has a dead end
    assert (~g.bidirectional).any() == (one_way and aisles > 1)


def test_racks_stay_clear_of_every_lane() -> None:
    site = warehouse_layout(aisles=6)
    g, o = site.graph, site.obstacles
    a, b = g.xy[g.lane_from], g.xy[g.lane_to]
    for centre, half in zip(o.centres, o.half_extents, strict=True):
        # Distance from each lane segment to the rack's footprint, sampled along the lane.
        t = np.linspace(0, 1, 41)[:, None, None]
        points = a[None] + t * (b - a)[None]
        outside = np.maximum(np.abs(points - centre[:2]) - half[:2], 0.0)
        gap = np.hypot(outside[..., 0], outside[..., 1]).min()
        assert gap >= 0.9  # aisle_width 2 m: 1 m from the aisle's centre line to each face


def test_bad_numbers_are_named() -> None:
    with pytest.raises(ConfigError, match="aisles must be a whole number >= 1"):
        warehouse_layout(aisles=0)
    with pytest.raises(ConfigError, match="blocks must be a whole number >= 1, got 0"):
        warehouse_layout(blocks=0)
    with pytest.raises(ConfigError, match="node_spacing must be > 0 m"):
        warehouse_layout(node_spacing=-1.0)
    with pytest.raises(ConfigError, match=r"aisle_length 2\.0 m leaves no rack"):
        warehouse_layout(aisle_length=2.0)
    with pytest.raises(ConfigError, match=r"unexpected keyword argument 'isles'.*known: aisles"):
        warehouse_layout(isles=3)
    with pytest.raises(ConfigError, match="site layout type must be one of warehouse"):
        site_layout({"type": "hospital"})


def test_a_scenario_on_a_generated_warehouse(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        """
        name: gen
        simulation: {timestep: 0.1, target_rtf: 0, duration: 60, seed: 3,
                     collision_narrowphase: aabb}
        site: {layout: {type: warehouse, aisles: 4, aisle_length: 10, stations: 2}}
        robots:
          - {name: amr, model: mobile_robot, start: {random: 6, at: parking_spot}}
        plugins:
          - type: fleet_manager
            params: {tasks: {poisson: {rate_per_hour: 20}}, pick_time: 2, drop_time: 2}
    """,
    )
    result = fleetsim("run", str(path), "--fail-on", "collisions")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "deadlocks         │ 0 (0 unresolved)" in result.stdout
    crowded = path.read_text().replace("random: 6", "random: 99")
    path.write_text(crowded)
    result = fleetsim("validate", str(path))
    assert result.returncode == 2 and "99 robots do not fit on the site's 21 nodes flagged" in (
        result.stderr
    )
