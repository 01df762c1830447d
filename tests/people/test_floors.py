"""People on several floors of one building: each on its own floor (its walls, its robots, its
people), never meeting those of another floor at the same x, y; lidars and recordings put
them at their floor's height; routes and groups across floors refused (no stairs or lifts for
people yet)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.errors import ConfigError
from fleetsim.scenario import build, load_scenario
from fleetsim.site import Site
from fleetsim.site.graph import RouteError


def two_floors() -> Site:
    """The same 20 m aisle on L1 (0 m) and L2 (5 m), a wall along y = 1.5 on L2 only."""
    nodes = [{"name": f"{lv}_{i}", "x": 2.0 * i, "y": 0.0, "level": lv}
             for lv in ("L1", "L2") for i in range(11)]  # fmt: skip
    lanes = [{"from": f"{lv}_{i}", "to": f"{lv}_{i + 1}"} for lv in ("L1", "L2") for i in range(10)]
    site = Site.from_graph(nodes, lanes)
    site.elevations = {"L1": 0.0, "L2": 5.0}
    site.obstacles.centres = np.array([[10.0, 1.7, 5.5]])  # (on L2's floor)
    site.obstacles.half_extents = np.array([[10.0, 0.2, 0.5]])
    site.obstacles.yaws = np.zeros(1)
    return site


def test_people_of_two_floors_never_meet_nor_see_the_other_floors_robots() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        sim.set_site(two_floors())
        robot = Agent.from_params(
            AgentSpawnParams("mobile_robot", name="amr", initial_pose=Pose.from_xyz(4.0, 0.0, 0.0)),
            sim,
        )  # fmt: skip (on L1, standing at x = 4)
        people = sim.people
        east = people.route_between("L1_0", "L1_10")
        up = people.route_between("L2_0", "L2_10")
        assert np.array_equal(east, up)  # (the same aisle, one floor up)
        a = people.add(np.array([[0.0, 0.05]]), [east], np.array([1.0]), level="L1")
        b = people.add(np.array([[0.0, 0.05]]), [up], np.array([1.0]), level="L2")
        assert people.level_rows().tolist() == [0, 1]
        assert people.floors().tolist() == [0.0, 5.0]
        shapes = people.ray_shapes()
        assert shapes is not None and shapes.centre[:, 2].tolist() == [0.85, 5.85]
        seen = []
        for _ in range(80):
            sim.step_once()
            rows = people.crowd.rows(np.concatenate((a, b)))
            seen.append(people.positions[rows].copy())
        path = np.array(seen)  # (steps, the two, x y)
        # L2: straight on at 1 m/s, as if alone (nobody at its x, y on its floor)
        assert path[-1, 1, 0] == pytest.approx(8.0, abs=0.2)
        assert np.abs(path[:, 1, 1]).max() <= 0.05 + 1e-9
        # L1: held before the robot standing in the aisle at x = 4 (its disc: 0.4 m)
        assert path[:, 0, 0].max() < 4.0 - 0.4 - 0.2 + 1e-9
        assert people.kpis()["person_contacts"] == 0 and robot.get_pose().x == pytest.approx(4.0)


def test_a_wall_of_one_floor_is_not_a_wall_of_the_other() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        sim.set_site(two_floors())
        people = sim.people
        across = [np.array([[5.0, 3.0]])]  # (north, through where L2's wall stands)
        [low] = people.add(np.array([[5.0, 0.0]]), across, np.array([1.0]), level="L1")
        [high] = people.add(np.array([[5.0, 0.0]]), across, np.array([1.0]), level="L2")
        people.staying.update({int(low), int(high)})
        for _ in range(60):
            sim.step_once()
        y = dict(zip(people.crowd.ids.tolist(), people.positions[:, 1].tolist(), strict=True))
        assert y[int(low)] == pytest.approx(3.0, abs=0.31)  # through: no wall on L1
        assert y[int(high)] <= 1.5 - 0.2 + 1e-9  # stopped by L2's wall


def test_routes_and_groups_across_floors_are_refused(tmp_path: Path) -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        sim.set_site(two_floors())
        with pytest.raises(RouteError, match="people walk one floor"):
            sim.people.route_between("L1_0", "L2_5")
        with pytest.raises(ConfigError, match="no level 'L9'"):
            sim.people.add(np.zeros((1, 2)), [np.zeros((1, 2))], level="L9")
    built = build(load_scenario("hospital", []))  # (three floors)
    graph = built.sim.site.graph
    built.sim.close()
    low, high = graph.level_names[0], graph.level_names[1]
    on = {lv: next(n for k, n in enumerate(graph.names) if graph.level_names[graph.level[k]] == lv)
          for lv in (low, high)}  # fmt: skip
    group = f"{{name: visitors, count: 2, from: [{on[low]}], to: [{on[high]}]}}"
    with pytest.raises(ConfigError, match=rf"people\.groups\[0\]\.to\[0\]: .* is on {high}, "
                       rf"the group's floor is {low}: people walk one floor"):  # fmt: skip
        build(load_scenario("hospital", [f"people={{groups: [{group}]}}"]))
