"""NavigateToPose from real rclpy action clients in other processes: a goal driven along the
site's lanes completes where it says, with feedback; a cancelled goal leaves its robot
stopped; goals in a wall or an unknown frame are aborted with the reason; a client that
vanishes mid-goal leaves its robot stopped."""

from __future__ import annotations

import itertools
import math

import numpy as np

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings
from fleetsim.site import Obstacles, Site

from .conftest import Client

SUCCEEDED, CANCELED, ABORTED = 4, 5, 6


def test_goals_feedback_cancel_rejections_and_a_vanished_client(ros_domain: int) -> None:
    goals = [
        {"robot": "r0", "at": 0.5, "x": 4.5, "y": 4.3, "yaw": math.pi / 2},
        {"robot": "r1", "at": 0.5, "x": 2.0, "y": 3.0},  # inside the wall
        {"robot": "r1", "at": 0.5, "x": 1.0, "y": 1.0, "frame": "earth"},
        {"robot": "r2", "at": 0.5, "x": 4.0, "y": 4.0, "cancel_at": 2.5},
    ]
    client = Client(ros_domain, {"seconds": 10, "goals": goals})
    far = [{"robot": "r3", "at": 0.5, "x": 4.0, "y": 4.0}]
    leaver = Client(ros_domain, {"seconds": 10, "exit_at": 2.5, "goals": far})
    nodes = [{"name": "a", "x": 0.0, "y": 0.0}, {"name": "b", "x": 4.0, "y": 0.0},
             {"name": "c", "x": 4.0, "y": 4.0}]  # fmt: skip
    lanes = [{"from": "a", "to": "b", "bidirectional": True},
             {"from": "b", "to": "c", "bidirectional": True}]  # fmt: skip
    site = Site.from_graph(nodes, lanes)
    site.obstacles = Obstacles(
        np.array([[2.0, 3.0, 0.5]]), np.array([[1.0, 0.2, 0.5]]), np.zeros(1)
    )
    with MultiRobotSimulationCore(SimulationParams(timestep=0.05, target_rtf=3.0)) as sim:
        sim.set_site(site)
        robots = [
            Agent.from_params(
                AgentSpawnParams(
                    "simple_cube",
                    initial_pose=Pose.from_xyz(0, 0.3 * k, 0),
                    name=f"r{k}",
                    max_linear_vel=0.3 if k == 3 else 1.0,
                ),
                sim,
            )
            for k in range(4)
        ]
        with Ros2Bridge(sim, robots, Ros2Settings(domain_id=ros_domain)) as bridge:
            sim.run_simulation(33.0)
            active = dict(bridge.navigation.active) if bridge.navigation else None
        ends = [robot.get_pose() for robot in robots]
        moving = [robot.is_moving for robot in robots]
    heard = client.result()["heard"]
    done = heard["goal/0"]
    assert done["accepted"] and done["status"] == SUCCEEDED and done["error"] == [0, ""]
    assert math.hypot(ends[0].x - 4.5, ends[0].y - 4.3) < 0.06
    assert abs(ends[0].yaw - math.pi / 2) < 0.05
    left = [f[0] for f in done["feedback"]]
    assert len(left) > 20 and left[0] > 8.0 and left[-1] < 1.0  # (a -> b -> c -> the goal: 8.5 m)
    assert all(later <= earlier + 0.05 for earlier, later in itertools.pairwise(left))
    assert done["feedback"][0][1] > 7.0  # the estimated time left at 1 m/s
    wall, frame = heard["goal/1"], heard["goal/2"]
    assert wall["status"] == ABORTED and "inside a wall or blocked cell" in wall["error"][1]
    assert frame["status"] == ABORTED and "unknown frame 'earth'" in frame["error"][1]
    assert frame["error"][0] == 9002  # (Nav2's TF_ERROR)
    cancelled = heard["goal/3"]
    assert cancelled["status"] == CANCELED and not moving[2]
    assert math.hypot(ends[2].x - 4.0, ends[2].y - 4.0) > 1.0  # stopped on the way
    assert not moving[3] and math.hypot(ends[3].x - 4.0, ends[3].y - 4.0) > 1.0
    assert leaver.result()["heard"]["goal/0"]["accepted"]
    assert active == {}
