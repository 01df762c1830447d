"""`Ros2Bridge`: a simulation's robots as ROS 2 robots, over rclpy (`pip install
"fleetsim[ros2]" ./ros2-interfaces`).

Two nodes of the bridge's own rclpy context: `fleetsim` publishes, and takes `cmd_vel` on a
thread of its own (`commands`); `fleetsim_services` holds the navigation servers and the
building's requests, spun by an executor on another thread. What arrives is queued there and
applied at the start of the next step; what goes out is built from the arrays after each step
and published from the simulation's thread. Per robot, under its name as namespace:

- `odom` (nav_msgs/Odometry: the pose in the world, the velocity in the robot's frame) and
  `tf` (map -> odom -> base_footprint) at `odom_hz` of simulated time, `tf_static` (its
  lidars' mounts, latched), `battery_state` at `battery_hz`, `scan` with each scan of its first
  lidar (sensor-data QoS) (`robot_topics`);
- `cmd_vel` (geometry_msgs/Twist): velocity control within the robot's limits, stopping after
  `cmd_vel_timeout` simulated seconds without a command, as base controllers do; a twist with
  a NaN or infinite field is ignored (and counted, and logged once a robot) (`commands`);
- `navigate_to_pose` (nav2_msgs/action/NavigateToPose), driven by fleetsim's routing
  (`navigation`).

And fleet-wide: `/clock` (rosgraph_msgs/Clock) every step, so nodes can run on simulated time
(`use_sim_time`); `/fleet/poses` (geometry_msgs/PoseArray, frame `map`): every robot's pose in
one message at `fleet_hz`, in `robots` order; `/fleet/markers` and `/site/markers` (`markers`);
the doors and lifts as Open-RMF's (`building`). Message stamps are simulated time.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.battery import BatteryParams
from fleetsim.interfaces.ros2 import network
from fleetsim.interfaces.ros2.bag import Bag, RecordingNode
from fleetsim.interfaces.ros2.building import Building
from fleetsim.interfaces.ros2.commands import Commands
from fleetsim.interfaces.ros2.markers import Markers
from fleetsim.interfaces.ros2.navigation import Navigation
from fleetsim.interfaces.ros2.robot_topics import RobotTopics, stamp
from fleetsim.interfaces.serving import StepHooks

log = logging.getLogger(__name__)

NEEDS = (
    "the ROS 2 bridge needs rclpy, its messages and fleetsim's ROS 2 interfaces: from "
    'fleetsim\'s source tree, pip install ".[ros2]" ./ros2-interfaces (x86_64 Linux)'
)


@dataclass(frozen=True)
class Ros2Settings:
    """How the bridge talks.

    Attributes:
        domain_id: the ROS 2 domain (0 to 101).
        localhost: keep the traffic on this machine's loopback (`network`); False: the
            machine's network, as ROS 2's defaults (anyone who reaches it can drive the robots).
        odom_hz: odometry and transforms a simulated second per robot.
        fleet_hz: `/fleet/poses` messages a simulated second.
        cmd_vel_timeout: simulated seconds a `cmd_vel` lasts.
        robot_topics: each robot's own topics (`odom`, `tf`, `scan`, `cmd_vel`,
            `navigate_to_pose`...); False: the fleet-wide ones alone (`/clock`, `/fleet/poses`,
            the markers, the building's), for looking at many robots.
        tf: publish each robot's `tf` (map -> odom -> base_footprint).
        map_to_odom: include map -> odom (the identity: odometry is the world pose); False
            for users who run their own localisation.
        frame_prefix: frames named `<robot>/odom`, `<robot>/base_footprint`, `<robot>/laser`;
            False: bare (`odom`, ...), for one navigation stack per robot on its own `tf`.
        battery_hz: `battery_state` messages a simulated second per robot.
        battery: the simulated batteries' rates (drained by distance and time; no charging).
        navigation: the `navigate_to_pose` servers.
        feedback_hz: navigation feedback messages a simulated second per goal.
        markers_hz: `/fleet/markers` messages a simulated second (0: none, nor the site's).
        building: the doors' and lifts' topics, as Open-RMF's.
        bag: a folder to write a ROS 2 bag of everything published to (rosbag2, MCAP; it
            must not exist yet), or None.
    """

    domain_id: int = 0
    localhost: bool = True
    odom_hz: float = 10.0
    fleet_hz: float = 1.0
    cmd_vel_timeout: float = 0.5
    robot_topics: bool = True
    tf: bool = True
    map_to_odom: bool = True
    frame_prefix: bool = True
    battery_hz: float = 1.0
    battery: BatteryParams = field(default_factory=BatteryParams)
    navigation: bool = True
    feedback_hz: float = 5.0
    markers_hz: float = 1.0
    building: bool = True
    bag: str | None = None

    def __post_init__(self) -> None:
        network.check_domain(self.domain_id)
        if not (isinstance(self.markers_hz, int | float) and self.markers_hz >= 0):
            raise ConfigError(f"ROS 2 bridge: markers_hz must be >= 0, got {self.markers_hz!r}")
        for name in ("odom_hz", "fleet_hz", "cmd_vel_timeout", "battery_hz", "feedback_hz"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"ROS 2 bridge: {name} must be > 0, got {value!r}")


def _ros() -> dict[str, Any]:
    """rclpy and the message classes, or a FleetSimError saying how to install them."""
    try:
        import rclpy
        from geometry_msgs.msg import Point, Pose, PoseArray, TransformStamped, Twist
        from nav2_msgs.action import NavigateToPose
        from nav_msgs.msg import Odometry
        from rclpy.action.server import ActionServer, CancelResponse
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import (
            DurabilityPolicy,
            QoSProfile,
            ReliabilityPolicy,
            qos_profile_sensor_data,
        )
        from rclpy.serialization import serialize_message
        from rclpy.task import Future
        from rmf_door_msgs.msg import DoorRequest, DoorState
        from rmf_lift_msgs.msg import LiftRequest, LiftState
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import BatteryState, LaserScan
        from tf2_msgs.msg import TFMessage
        from visualization_msgs.msg import Marker, MarkerArray
    except ImportError as exc:
        raise FleetSimError(f"{NEEDS} ({exc})") from None
    latched = QoSProfile(  # type: ignore[no-untyped-call]
        depth=1,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE,
    )
    return {
        **{c.__name__: c for c in (Point, Pose, PoseArray, TransformStamped, Twist, Odometry)},
        **{c.__name__: c for c in (NavigateToPose, ActionServer, CancelResponse, Future)},
        **{c.__name__: c for c in (DoorRequest, DoorState, LiftRequest, LiftState, Clock)},
        **{c.__name__: c for c in (BatteryState, LaserScan, TFMessage, Marker, MarkerArray)},
        "rclpy": rclpy,
        "Executor": SingleThreadedExecutor,
        "SensorQoS": qos_profile_sensor_data,
        "Latched": latched,
        "Reliable": lambda depth: QoSProfile(  # type: ignore[no-untyped-call]
            depth=depth, reliability=ReliabilityPolicy.RELIABLE
        ),
        "serialize": serialize_message,
    }


class Ros2Bridge:
    """`robots` (agents of `sim`) as ROS 2 robots until `close()` (see the module's text)."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Any],
        settings: Ros2Settings | None = None,
    ) -> None:
        self.sim, self.robots = sim, list(robots)
        self.settings = settings = settings or Ros2Settings()
        names = [robot.name for robot in self.robots]
        if len(set(names)) != len(names):
            raise ConfigError("ROS 2 bridge: robot names are namespaces and must be unique")
        self.ros = ros = _ros()
        self.bag = Bag(settings.bag, lambda: round(sim.sim_time * 1e9)) if settings.bag else None
        if settings.localhost:
            network.apply(network.loopback_environment(settings.domain_id))
        rclpy = ros["rclpy"]
        self._context = rclpy.Context()
        rclpy.init(context=self._context, domain_id=settings.domain_id)
        self.node = rclpy.create_node("fleetsim", context=self._context)
        self.services = rclpy.create_node("fleetsim_services", context=self._context)
        self._executor = ros["Executor"](context=self._context)
        self._executor.add_node(self.services)
        node, services = self.node, self.services
        if self.bag is not None:  # (what their publishers publish goes to the bag too)
            node = RecordingNode(node, self.bag, ros["serialize"])
            services = RecordingNode(services, self.bag, ros["serialize"])
        self.clock = node.create_publisher(ros["Clock"], "/clock", 10)
        self.fleet = node.create_publisher(ros["PoseArray"], "/fleet/poses", 10)
        self._handles = np.array([robot.handle for robot in self.robots], dtype=np.int64)
        own = self.robots if settings.robot_topics else []
        self.topics = RobotTopics(sim, own, ros, node, settings)
        self.commands = Commands(sim.world, own, ros, self.node, settings.cmd_vel_timeout)
        self.navigation = (
            Navigation(sim, own, ros, self.services, self._executor, settings)
            if settings.navigation
            else None
        )
        self.building = Building(sim, ros, services) if settings.building else None
        self.markers = Markers(sim, self.robots, ros, node) if settings.markers_hz else None
        self._thread = threading.Thread(
            target=self._spin, name="fleetsim-ros2-services", daemon=True
        )
        self._thread.start()
        now = sim.sim_time
        self._next = {"odom": now, "fleet": now, "battery": now, "markers": now}
        self._hooks = StepHooks(sim, self._inbound, self._outbound)
        self._closed = False

    @property
    def received(self) -> int:
        """`cmd_vel` messages heard."""
        return self.commands.received

    @property
    def ignored(self) -> int:
        """`cmd_vel` messages ignored (a NaN or infinite field)."""
        return self.commands.ignored

    @property
    def on_command(self) -> Callable[[Any, tuple[float, ...]], None] | None:
        """Called with (robot, the twist's six numbers) for each command the step applies."""
        return self.commands.on_command

    @on_command.setter
    def on_command(self, value: Callable[[Any, tuple[float, ...]], None] | None) -> None:
        self.commands.on_command = value

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception as exc:  # (the context shut down under it: done)
            if not self._closed:
                log.error("ROS 2 bridge: %s", exc)

    # -- each step ----------------------------------------------------------------------------

    def _inbound(self) -> None:
        """Apply what arrived: commands (a robot given one leaves its navigation goal), goals,
        door and lift requests."""
        commanded = self.commands.apply()
        if self.navigation is not None:
            for k in commanded:
                self.navigation.preempt(k)
            self.navigation.start_new()
        if self.building is not None:
            self.building.apply()

    def _due(self, what: str, hz: float) -> bool:
        now = self.sim.sim_time
        if now + 1e-9 < self._next[what]:
            return False
        self._next[what] = now + 1.0 / hz
        return True

    def _outbound(self) -> None:
        settings, topics = self.settings, self.topics
        when = stamp(self.sim.sim_time)
        clock = self.ros["Clock"]()
        clock.clock.sec, clock.clock.nanosec = when
        self.clock.publish(clock)
        if topics.odom and self._due("odom", settings.odom_hz):
            topics.publish_odometry(when)
        if topics.battery and self._due("battery", settings.battery_hz):
            topics.publish_batteries(when)
        if topics.scans:
            topics.publish_scans()
        if self._due("fleet", settings.fleet_hz):
            self._publish_fleet(when)
        if self.navigation is not None:
            self.navigation.publish()
        if self.building is not None:
            self.building.publish()
        if self.markers is not None and self._due("markers", settings.markers_hz):
            self.markers.publish()

    def _publish_fleet(self, when: tuple[int, int]) -> None:
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        pos, quat = bodies["pos"][rows], bodies["quat"][rows]
        ros = self.ros
        message = ros["PoseArray"]()
        message.header.frame_id = "map"
        message.header.stamp.sec, message.header.stamp.nanosec = when
        poses = []
        for p, q in zip(pos.tolist(), quat.tolist(), strict=True):
            pose = ros["Pose"]()
            pose.position.x, pose.position.y, pose.position.z = p
            pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q
            poses.append(pose)
        message.poses = poses
        self.fleet.publish(message)

    # -- the end ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop: no more hooks, running goals aborted, the nodes and their context gone, the
        threads joined."""
        if self._closed:
            return
        self._hooks.remove()
        if self.navigation is not None:
            self.navigation.close()
        self._closed = True
        self.commands.stop()
        self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=5)
        self.services.destroy_node()
        self.node.destroy_node()
        self._context.try_shutdown()
        if self.bag is not None:
            self.bag.close()

    def __enter__(self) -> Ros2Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
