"""The bridge driven from another process by real rclpy, as a user's node would: odometry and
/clock heard, a robot driven by cmd_vel and stopped after the timeout, a bad twist ignored,
scans as LaserScan, and the `fleetsim ros2` command."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings

from .conftest import Client


def fleet(sim: MultiRobotSimulationCore, count: int) -> list[Agent]:
    return [
        Agent.from_params(
            AgentSpawnParams(
                "simple_cube", initial_pose=Pose.from_xyz(0, 2.0 * k, 0), name=f"r{k}"
            ),
            sim,
        )
        for k in range(count)
    ]


def test_odometry_clock_and_cmd_vel(ros_domain: int) -> None:
    """r1 driven at 0.5 m/s while commands come, stopped after them; every odometry message
    has the pose the simulation had at its stamp (to 1 mm), stamps on /clock's time."""
    client = Client(ros_domain, {"seconds": 7, "odom": ["r1"], "clock": True,
                                 "cmd_vel": {"r1": [2.0, 4.0, 0.5, 0.0, 0.0]}})  # fmt: skip
    truth: dict[int, float] = {}
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        robots = fleet(sim, 3)
        sim.on(
            "post_step",
            lambda s, dt: truth.__setitem__(s.step_count, robots[1].get_pose().position[0]),
        )
        with Ros2Bridge(sim, robots, Ros2Settings(domain_id=ros_domain)) as bridge:
            applied: list[tuple[str, tuple[float, ...]]] = []
            bridge.on_command = lambda robot, twist: applied.append((robot.name, twist))
            sim.run_simulation(8.0)
        moved = robots[1].get_pose().position[0]
    assert applied and all(a == ("r1", (0.5, 0.0, 0.0, 0.0, 0.0, 0.0)) for a in applied)
    heard = client.result()["heard"]
    odom = heard["odom/r1"]
    assert len(odom) > 30 and odom[0][4] == "r1/base_footprint"
    for stamp, x, *_ in odom:
        assert x == pytest.approx(truth[round(stamp / 0.1)], abs=1e-3)
    clocks = heard["clock"]
    after = [s for s in odom if s[0] >= clocks[0]]  # (odometry heard before /clock was matched:
    assert clocks == sorted(clocks) and len(after) > 30  # no clock to compare; discovery's order)
    assert set(round(s[0], 1) for s in after) <= set(round(c, 1) for c in clocks)
    assert 0.6 < moved < 1.5  # 0.5 m/s for about 2 s (wall) and the 0.5 s timeout
    assert odom[-1][3] == 0.0 and any(v == pytest.approx(0.5) for *_, v, _ in odom)


def test_a_bad_twist_is_ignored_and_the_simulation_goes_on(ros_domain: int) -> None:
    client = Client(ros_domain, {"seconds": 5, "odom": ["r0"],
                                 "cmd_vel": {"r0": [1.5, 3.0, "nan", 0.0, 0.0]}})  # fmt: skip
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        (robot,) = fleet(sim, 1)
        with Ros2Bridge(sim, [robot], Ros2Settings(domain_id=ros_domain)) as bridge:
            sim.run_simulation(6.0)
            ignored = bridge.ignored
        assert robot.get_pose().position[0] == 0.0
    result = client.result()
    assert result["sent"]["r0"] > 10 and ignored > 0 and len(result["heard"]["odom/r0"]) > 20


def test_scans_as_laser_scans(ros_domain: int) -> None:
    client = Client(ros_domain, {"seconds": 5, "scan": ["r0"]})
    scans: dict[float, np.ndarray] = {}
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        robot, other = fleet(sim, 2)
        lidar = robot.add_lidar(beams=8, rate=5.0)
        sim.on(
            "post_step", lambda s, dt: scans.__setitem__(round(lidar.scan().stamp, 1), lidar.ranges)
        )
        with Ros2Bridge(sim, [robot, other], Ros2Settings(domain_id=ros_domain)):
            sim.run_simulation(6.0)
    heard = client.result()["heard"]["scan/r0"]
    assert len(heard) > 10 and heard[0][1] == "r0/laser"
    for stamp, _, ranges in heard:
        np.testing.assert_array_equal(np.array(ranges, dtype=np.float32), scans[round(stamp, 1)])
    assert heard[-1][2][6] == pytest.approx(1.8)  # beam 6 (90 degrees): the other robot
    assert math.isinf(heard[-1][2][0])


def test_the_ros2_command(ros_domain: int, tmp_path: object) -> None:
    client = Client(ros_domain, {"seconds": 6, "odom": ["amr_0"], "clock": True})
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "ros2", "warehouse", "--domain-id", str(ros_domain),
         "--duration", "6", "--set", "robots[0].start.random=5"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"ROS 2 domain {ros_domain} (loopback): 5 robots" in done.stdout
    heard = client.result()["heard"]
    assert len(heard["odom/amr_0"]) > 10 and len(heard["clock"]) > 10
