"""Sites in a simulation: obstacles become static bodies, robots route to named places."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, MultiRobotSimulationCore, Pose
from fleetsim.actions import ActionStatus, GoTo
from fleetsim.site import Site

from ..conftest import make_sim
from .maps import LANES, NODES, SMALL


@pytest.fixture
def sim() -> MultiRobotSimulationCore:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        yield s


def drive(sim: MultiRobotSimulationCore, robot: Agent, check: object, steps: int = 3000) -> None:
    for _ in range(steps):
        sim.step_once()
        check(robot.get_pose())  # type: ignore[operator]
        if robot.get_current_action() is None:
            return
    raise AssertionError("the robot did not arrive")


def test_go_to_follows_the_lanes_to_the_place(sim: MultiRobotSimulationCore) -> None:
    site = Site.from_graph(NODES, LANES)
    assert sim.set_site(site) == [] and sim.site is site
    robot = Agent.from_urdf(
        "mobile_robot", Pose.from_xyz(0.3, 0.2, 0), sim_core=sim, motion_mode="differential"
    )
    action = robot.go_to("b")
    farthest = [0.0]

    def on_lane(pose: Pose) -> None:
        _, dist = site.graph.lane_at(np.array([[pose.x, pose.y]]))
        farthest[0] = max(farthest[0], float(dist[0]))

    drive(sim, robot, on_lane)
    assert action.status is ActionStatus.COMPLETED and action.route == ["dock", "a", "b"]
    assert robot.get_pose().position[:2] == pytest.approx((5.0, 5.0), abs=0.05)
    # From its start 0.36 m off the dock node it joins the graph, then stays on the lanes.
    assert farthest[0] <= 0.37
    parked = robot.go_to("c")  # a node with a yaw: the robot ends facing it
    drive(sim, robot, lambda pose: None)
    assert parked.status is ActionStatus.COMPLETED
    assert robot.get_pose().yaw == pytest.approx(1.57, abs=1e-3)


def test_go_to_failures_say_why(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf("simple_cube", sim_core=sim)
    no_site = robot.go_to("b")
    assert no_site.status is ActionStatus.FAILED and "no site" in (no_site.error_message or "")
    sim.set_site(Site.from_graph(NODES, LANES))
    typo, island = robot.go_to("bb"), robot.go_to("island")
    assert "unknown node 'bb': did you mean 'b'" in (typo.error_message or "")
    assert "no route from 'dock' to 'island'" in (island.error_message or "")
    with pytest.raises(ConfigError, match="already has a site"):
        sim.set_site(Site.from_graph(NODES, LANES))
    with pytest.raises(ConfigError, match="node name or index"):
        GoTo(3.5)  # type: ignore[arg-type]
    sim.reset()
    assert sim.site is None


def test_a_grid_map_never_drives_into_a_blocked_cell(
    sim: MultiRobotSimulationCore, tmp_path: Path
) -> None:
    path = tmp_path / "small.map"
    path.write_text(SMALL)
    site = Site.from_grid(path, cell_size=1.0)
    bodies = sim.set_site(site)
    assert len(bodies) == len(site.obstacles) == len(site.grid.rectangles)  # type: ignore[union-attr]
    start = site.graph.xy[site.graph.node("r0_c0")]
    robot = Agent.from_urdf("simple_cube", Pose.from_xyz(*start, 0), sim_core=sim)
    grid = site.grid
    assert grid is not None

    def free(pose: Pose) -> None:
        assert not grid.blocked[grid.cell_of(pose.x, pose.y)]

    action = robot.go_to("r0_c4")
    drive(sim, robot, free)
    assert action.status is ActionStatus.COMPLETED
    assert robot.get_pose().position[:2] == pytest.approx((4.5, 3.5), abs=0.05)
