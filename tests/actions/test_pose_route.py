"""`GoToPose`: along the lanes to the node nearest the goal, then straight to it; straight
without a site; `obstacle_at` finds walls at the goal."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.actions.base import ActionStatus
from fleetsim.actions.pose_route import GoToPose, obstacle_at
from fleetsim.errors import ConfigError
from fleetsim.site import Obstacles, Site


def robot(sim: MultiRobotSimulationCore) -> Agent:
    params = AgentSpawnParams("simple_cube", initial_pose=Pose.from_xyz(0.1, -0.2, 0), name="r")
    return Agent.from_params(params, sim)


def test_along_the_lanes_then_straight_to_the_pose() -> None:
    nodes = [{"name": "a", "x": 0.0, "y": 0.0}, {"name": "b", "x": 4.0, "y": 0.0},
             {"name": "c", "x": 4.0, "y": 4.0}]  # fmt: skip
    lanes = [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]
    with MultiRobotSimulationCore(SimulationParams(timestep=0.05)) as sim:
        sim.set_site(Site.from_graph(nodes, lanes))
        r = robot(sim)
        go = GoToPose(4.6, 4.5, math.pi)
        r.add_action(go)
        seen: list[tuple[float, float]] = []
        sim.on("post_step", lambda s, dt: seen.append(tuple(r.get_pose().position[:2])))
        sim.step_once()
        first = go.remaining(r)
        sim.run_simulation(20.0)
        assert go.route == ["a", "b", "c"] and go.status is ActionStatus.COMPLETED
        end = r.get_pose()
        assert math.hypot(end.x - 4.6, end.y - 4.5) < 0.06 and abs(abs(end.yaw) - math.pi) < 0.05
        assert first == pytest.approx(math.hypot(3.9, 0.2) + 4 + math.hypot(0.6, 0.5), abs=0.05)
        assert go.remaining(r) < 0.06
        assert any(abs(x - 4.0) < 0.02 and 1.0 < y < 3.0 for x, y in seen)  # (on lane b-c)


def test_straight_without_a_site_and_bad_goals() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.05)) as sim:
        r = robot(sim)
        go = GoToPose(2.0, 1.0, 0.0)
        r.add_action(go)
        sim.run_simulation(8.0)
        assert go.status is ActionStatus.COMPLETED
        assert r.get_pose().position[:2] == pytest.approx((2.0, 1.0), abs=0.06)
    with pytest.raises(ConfigError, match="finite"):
        GoToPose(math.nan, 0.0, 0.0)


def test_obstacle_at() -> None:
    nodes = [{"name": "a", "x": 0.0, "y": 0.0}]
    site = Site.from_graph(nodes, [])
    turned = math.pi / 4
    site.obstacles = Obstacles(
        np.array([[5.0, 0.0, 0.5]]), np.array([[2.0, 0.1, 0.5]]), np.array([turned])
    )
    along = (5.0 + math.cos(turned), math.sin(turned))  # 1 m along the turned wall
    assert "centred at (5.00, 0.00)" in obstacle_at(site, *along, 0.0)
    assert obstacle_at(site, 5.0, 1.0, 0.0) == ""  # beside it
    assert obstacle_at(site, *along, 3.0) == ""  # a floor above
    assert obstacle_at(None, 5.0, 0.0, 0.0) == ""
