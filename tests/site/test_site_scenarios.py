"""Sites in scenario files: `site:`, robots started on nodes, and `go_to` actions."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.loader import ScenarioError

from ..conftest import scenario
from .buildings import BUILDING
from .maps import SMALL

INLINE = """
simulation: {timestep: 0.1, target_rtf: 0, duration: 60, collision_narrowphase: aabb}
site:
  graph:
    nodes:
      - {name: dock, x: 0, y: 0, charger: true}
      - {name: a, x: 6, y: 0}
      - {name: b, x: 6, y: 6, pickup: true}
      - {name: c, x: 0, y: 6, yaw: 1.5708}
    lanes:
      - {from: dock, to: a}
      - {from: a, to: b}
      - {from: b, to: c}
      - {from: c, to: dock}
robots:
  - name: amr
    model: mobile_robot
    motion_mode: differential
    start: [dock, b]
    actions: [{type: go_to, node: c}, {type: go_to, node: a}]
"""


def test_robots_start_on_nodes_and_go_to_places(tmp_path: Path) -> None:
    run = build(load_scenario(scenario(tmp_path, INLINE)))
    with run.sim as sim:
        first, second = run.scene.robots
        assert (first.name, second.name) == ("amr_0", "amr_1")
        assert second.get_pose().position == (6.0, 6.0, 0.0)
        sim.run_simulation(60)
        assert sim.actions.completed_count == 4 and sim.actions.failed_count == 0
        for robot in (first, second):
            assert robot.get_pose().position[:2] == pytest.approx((6.0, 0.0), abs=0.05)


def test_grid_and_building_sites(tmp_path: Path) -> None:
    (tmp_path / "small.map").write_text(SMALL)
    grid = """
        simulation: {timestep: 0.1, target_rtf: 0, seed: 4}
        site: {file: small.map, cell_size: 1.0}
        robots: [{model: simple_cube, start: {random: 5}}]
    """
    run = build(load_scenario(scenario(tmp_path, grid)))
    with run.sim as sim:
        graph = sim.site.graph  # type: ignore[union-attr]
        positions = [tuple(r.get_pose().position[:2]) for r in run.scene.robots]
        assert len(set(positions)) == 5
        assert all(min(abs(graph.xy - p).sum(axis=1)) < 1e-9 for p in positions)
        assert len(sim.sim_objects) == 5 + len(sim.site.obstacles)  # type: ignore[union-attr]
    (tmp_path / "office.building.yaml").write_text(BUILDING)
    building = """
        site: {file: office.building.yaml, level: L1}
        robots: [{model: mobile_robot, start: spawn, actions: [{type: go_to, node: pantry}]}]
    """
    run = build(load_scenario(scenario(tmp_path, building)))
    with run.sim as sim:
        (bot,) = run.scene.robots
        assert bot.name == "bot1" and bot.get_pose().position[:2] == pytest.approx((5.0, -5.0))
        assert len(sim.sim_objects) == 1 + 2  # the robot and two walls


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("start: [dock, b]", "start: [dock, dock]"), "node 'dock' already has a robot"),
        (("start: [dock, b]", "start: [dock, bee]"), "unknown node 'bee': did you mean 'b'"),
        (("node: c}", "node: see}"), r"actions\[0\] \(go_to\): unknown node 'see'"),
        (("site:\n", "old_site:\n"), "unknown key 'old_site'"),
    ],
)
def test_site_mistakes_are_clear(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        build(load_scenario(scenario(tmp_path, INLINE.replace(*change)))).sim.close()


def test_start_and_go_to_need_a_site(tmp_path: Path) -> None:
    text = "robots: [{model: mobile_robot, start: dock}]\n"
    with pytest.raises(ScenarioError, match="add a 'site:' section"):
        build(load_scenario(scenario(tmp_path, text)))
    text = "robots: [{model: mobile_robot, actions: [{type: go_to, node: x}]}]\n"
    with pytest.raises(ScenarioError, match="go_to needs a site"):
        build(load_scenario(scenario(tmp_path, text)))
