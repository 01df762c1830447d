"""A ROS 2 bag of what the bridge published, read back by two readers that share nothing with
fleetsim or rclpy: `rosbags` (rosbag2 metadata, its Jazzy type store) and `mcap-ros2-support`
(the schemas in the file alone)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from mcap_ros2.reader import read_ros2_messages
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.errors import ConfigError
from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings

from .test_bridge import fleet


def test_a_bag_holds_what_went_out(ros_domain: int, tmp_path: Path) -> None:
    truth: dict[int, float] = {}
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        robots = fleet(sim, 3)
        robots[1].add_lidar(beams=16, rate=5.0)
        sim.on("post_step", lambda s, dt: truth.__setitem__(s.step_count, robots[0].get_pose().x))
        settings = Ros2Settings(domain_id=ros_domain, bag=str(tmp_path / "run"))
        with Ros2Bridge(sim, robots, settings) as bridge:
            robots[0].controller.set_cmd_vel(0.5, timeout=100.0)
            sim.run_simulation(6.0)
        assert bridge.bag is not None and bridge.bag.messages > 200
    store = get_typestore(Stores.ROS2_JAZZY)
    with Reader(tmp_path / "run") as reader:
        assert reader.message_count == bridge.bag.messages and reader.duration > 5.8e9
        topics = {c.topic: c.msgtype for c in reader.connections}
        assert topics["/r0/odom"] == "nav_msgs/msg/Odometry"
        assert topics["/r0/tf"] == topics["/r1/tf_static"] == "tf2_msgs/msg/TFMessage"
        assert topics["/r1/scan"] == "sensor_msgs/msg/LaserScan"
        static = next(c for c in reader.connections if c.topic == "/r1/tf_static")
        assert static.ext.offered_qos_profiles[0].durability.name == "TRANSIENT_LOCAL"
        odom = [c for c in reader.connections if c.topic == "/r0/odom"]
        xs = []
        for connection, stamp, raw in reader.messages(connections=odom):
            message = store.deserialize_cdr(raw, connection.msgtype)
            assert message.header.stamp.sec * 10**9 + message.header.stamp.nanosec == stamp
            xs.append((stamp, message.pose.pose.position.x, message.child_frame_id))
    assert len(xs) == 60 and xs[-1][1] > 2.0 and xs[0][2] == "r0/base_footprint"
    for stamp, x, _ in xs:
        assert x == pytest.approx(truth[round(stamp / 1e8)], abs=1e-9)
    counts = Counter()
    for message in read_ros2_messages(str(tmp_path / "run" / "run.mcap")):
        counts[message.channel.topic] += 1
        if message.channel.topic == "/r1/scan":
            assert len(message.ros_msg.ranges) == 16
    assert counts["/r0/odom"] == 60 and counts["/r1/scan"] == 30 and counts["/clock"] == 60
    assert np.isfinite(xs[-1][1])


def test_the_commands_bag_has_the_buildings_messages(ros_domain: int, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "ros2", "hospital", "--domain-id", str(ros_domain),
         "--duration", "5", "--rtf", "0", "--bag", "hospital_bag"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ROS 2 bag: hospital_bag (" in done.stdout
    doors = [
        m.ros_msg
        for m in read_ros2_messages(str(tmp_path / "hospital_bag" / "hospital_bag.mcap"))
        if m.channel.topic == "/door_states"
    ]
    assert {d.door_name for d in doors} == {"L1_door", "L2_door", "L3_door"}
    assert all(d.current_mode.value == 0 for d in doors)  # (closed: no one asked)


def test_a_bag_where_one_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robots = fleet(sim, 1)
        for where, says in (
            (tmp_path / "taken", "it exists"),
            (tmp_path / "no" / "b", "no folder"),
        ):
            with pytest.raises(ConfigError, match=says):
                Ros2Bridge(sim, robots, Ros2Settings(domain_id=9, bag=str(where)))
