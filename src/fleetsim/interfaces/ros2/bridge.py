"""`Ros2Bridge`: a simulation's robots as ROS 2 robots, over rclpy (`pip install
"fleetsim[ros2]"`).

One node (`fleetsim`) of its own rclpy context, spun on a thread of its own: what arrives
(`cmd_vel`) is queued there and applied at the start of the next step; what goes out is built
from the arrays after each step and published from the simulation's thread (rclpy's publishers
take calls from any thread). Per robot, under its name as namespace:

- `odom` (nav_msgs/Odometry; frame `odom`, child `<robot>/base_footprint`; the pose in the
  world, the velocity in the robot's frame), at `odom_hz` of simulated time;
- `scan` (sensor_msgs/LaserScan, sensor-data QoS) with each scan of its first lidar;
- `cmd_vel` (geometry_msgs/Twist): velocity control within the robot's limits, stopping after
  `cmd_vel_timeout` simulated seconds without a command, as base controllers do; a twist with
  a NaN or infinite field is ignored (and counted, and logged once a robot). The latest command
  of each robot is applied at the start of the next step (`on_command` sees each one then).

And `/clock` (rosgraph_msgs/Clock) every step, so nodes can run on simulated time
(`use_sim_time`), and `/fleet/poses` (geometry_msgs/PoseArray, frame `map`): every robot's
pose in one message at `fleet_hz`, in `robots` order. Message stamps are simulated time.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.interfaces.ros2 import network
from fleetsim.interfaces.ros2.cdr import OdometryBytes
from fleetsim.interfaces.serving import StepHooks

log = logging.getLogger(__name__)

NEEDS = 'the ROS 2 bridge needs rclpy and its messages: pip install "fleetsim[ros2]"'


@dataclass(frozen=True)
class Ros2Settings:
    """How the bridge talks.

    Attributes:
        domain_id: the ROS 2 domain (0 to 101).
        localhost: keep the traffic on this machine's loopback (`network`); False: the
            machine's network, as ROS 2's defaults (anyone who reaches it can drive the robots).
        odom_hz: odometry messages a simulated second per robot.
        fleet_hz: `/fleet/poses` messages a simulated second.
        cmd_vel_timeout: simulated seconds a `cmd_vel` lasts.
        robot_topics: each robot's own topics (`odom`, `scan`, `cmd_vel`); False: the
            fleet-wide ones alone (`/clock`, `/fleet/poses`), for looking at many robots.
    """

    domain_id: int = 0
    localhost: bool = True
    odom_hz: float = 10.0
    fleet_hz: float = 1.0
    cmd_vel_timeout: float = 0.5
    robot_topics: bool = True

    def __post_init__(self) -> None:
        network.check_domain(self.domain_id)
        for name in ("odom_hz", "fleet_hz", "cmd_vel_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"ROS 2 bridge: {name} must be > 0, got {value!r}")


def _ros() -> Any:
    """rclpy and the message classes, or a FleetSimError saying how to install them."""
    try:
        import rclpy
        from geometry_msgs.msg import Pose, PoseArray, Twist
        from nav_msgs.msg import Odometry
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data
        from rclpy.serialization import serialize_message
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import LaserScan
    except ImportError as exc:
        raise FleetSimError(f"{NEEDS} ({exc})") from None
    names = ("rclpy", "Pose", "PoseArray", "Twist", "Odometry", "Executor", "SensorQoS")
    values = (rclpy, Pose, PoseArray, Twist, Odometry, SingleThreadedExecutor)
    return dict(
        zip(names, (*values, qos_profile_sensor_data), strict=True),
        Clock=Clock,
        LaserScan=LaserScan,
        serialize=serialize_message,
    )


class Ros2Bridge:
    """`robots` (agents of `sim`) as ROS 2 robots until `close()` (see the module's text)."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Any],
        settings: Ros2Settings | None = None,
    ) -> None:
        self.sim, self.robots = sim, list(robots)
        self.settings = settings or Ros2Settings()
        names = [robot.name for robot in self.robots]
        if len(set(names)) != len(names):
            raise ConfigError("ROS 2 bridge: robot names are namespaces and must be unique")
        self.ros = _ros()
        if self.settings.localhost:
            network.apply(network.loopback_environment(self.settings.domain_id))
        rclpy = self.ros["rclpy"]
        self._context = rclpy.Context()
        rclpy.init(context=self._context, domain_id=self.settings.domain_id)
        self.node = rclpy.create_node("fleetsim", context=self._context)
        self._handles = np.array([robot.handle for robot in self.robots], dtype=np.int64)
        self._motion = np.array([robot.motion_handle for robot in self.robots], dtype=np.int64)
        self._inbox: collections.deque[tuple[int, Any, float]] = collections.deque()
        self.received = 0  # cmd_vel messages heard
        # called with (robot, the twist's six numbers) for each command as the step applies it
        self.on_command: Callable[[Any, tuple[float, ...]], None] | None = None
        self.ignored = 0  # twists with a NaN or infinite field
        self._warned: set[int] = set()
        self._make_endpoints(names)
        self._executor = self.ros["Executor"](context=self._context)
        self._executor.add_node(self.node)
        self._spinning = True
        self._thread = threading.Thread(target=self._spin, name="fleetsim-ros2", daemon=True)
        self._thread.start()
        self._next_odom = self._next_fleet = sim.sim_time
        # the first lidar of each robot whose scans are published: its id -> the robot
        self._scanners = {self.robots[k].lidars[0].id: k for k in self.scan_pubs}
        self._hooks = StepHooks(sim, self._inbound, self._outbound)
        self._closed = False

    # -- set-up -------------------------------------------------------------------------------

    def _make_endpoints(self, names: list[str]) -> None:
        ros, node = self.ros, self.node
        self.clock = node.create_publisher(ros["Clock"], "/clock", 10)
        self.fleet = node.create_publisher(ros["PoseArray"], "/fleet/poses", 10)
        robots = self.robots if self.settings.robot_topics else []
        names = names[: len(robots)]
        self.odom = [node.create_publisher(ros["Odometry"], f"/{n}/odom", 10) for n in names]
        self.scan_pubs = {
            k: node.create_publisher(ros["LaserScan"], f"/{n}/scan", ros["SensorQoS"])
            for k, (n, robot) in enumerate(zip(names, robots, strict=True))
            if robot.lidars
        }
        self._subs = [  # (raw: the CDR bytes, read as six doubles at the step: no message object)
            node.create_subscription(
                ros["Twist"], f"/{n}/cmd_vel", lambda msg, k=k: self._heard(k, msg), 10, raw=True
            )
            for k, n in enumerate(names)
        ]
        self._odom_bytes = []
        for name in names:
            msg = ros["Odometry"]()
            msg.header.frame_id = "odom"
            msg.child_frame_id = f"{name}/base_footprint"
            self._odom_bytes.append(OdometryBytes(msg, ros["serialize"]))

    def _spin(self) -> None:
        """Take the commands as they come, on the bridge's thread: all robots' subscriptions
        in one wait set, every ready one taken after each wait (a generic executor builds its
        wait set anew for each callback: thousands of subscriptions cost it milliseconds
        each time), a few milliseconds between waits so that commands gather."""
        subs = self._subs
        try:
            from rclpy.impl.implementation_singleton import rclpy_implementation as rcl
        except ImportError:  # (another rclpy: its executor)
            return self._spin_executor()
        with contextlib.ExitStack() as held:
            for sub in subs:
                held.enter_context(sub.handle)
            held.enter_context(self._context.handle)
            waits = rcl.WaitSet(len(subs), 0, 0, 0, 0, 0, self._context.handle)
            index = {sub.handle.pointer: k for k, sub in enumerate(subs)}
            while self._spinning:
                try:
                    waits.clear_entities()
                    for sub in subs:
                        waits.add_subscription(sub.handle)
                    waits.wait(50_000_000)  # (ns)
                    for pointer in waits.get_ready_entities("subscription"):
                        k = index[pointer]
                        taken = subs[k].handle.take_message(subs[k].msg_type, True)
                        if taken is not None:
                            self._heard(k, taken[0])
                except Exception as exc:  # (the context shut down under it: done)
                    if self._spinning:
                        log.error("ROS 2 bridge: %s", exc)
                    return None
                time.sleep(0.002)
        return None

    def _spin_executor(self) -> None:
        while self._spinning:
            try:
                self._executor.spin_once(timeout_sec=0.05)
            except Exception as exc:  # (the context shut down under it: done)
                if self._spinning:
                    log.error("ROS 2 bridge: %s", exc)
                return

    def _heard(self, k: int, msg: Any) -> None:
        """A `cmd_vel` arrived (the executor's thread): queued for the next step."""
        self.received += 1
        self._inbox.append((k, msg, time.monotonic()))

    # -- each step ----------------------------------------------------------------------------

    def _inbound(self) -> None:
        """Apply the commands that arrived, the latest per robot."""
        latest: dict[int, Any] = {}
        while self._inbox:
            k, msg, _ = self._inbox.popleft()
            latest[k] = msg
        for k, data in latest.items():
            full = _twist(data)
            twist = (full[0], full[1], full[5])
            if self.on_command is not None:
                self.on_command(self.robots[k], full)
            if not all(math.isfinite(v) for v in twist):
                self._ignore(k, twist)
                continue
            robot = self.robots[k]
            if robot.is_removed:
                continue
            lateral = twist[1] if robot.spawn_params.motion_mode != "differential" else 0.0
            robot.controller.set_cmd_vel(
                twist[0], lateral, twist[2], timeout=self.settings.cmd_vel_timeout
            )

    def _ignore(self, k: int, twist: tuple[float, ...]) -> None:
        self.ignored += 1
        if k not in self._warned:
            self._warned.add(k)
            log.warning(
                "ROS 2 bridge: %s: a cmd_vel with a NaN or infinite field was ignored: %s",
                self.robots[k].name,
                twist,
            )

    def _outbound(self) -> None:
        sim = self.sim
        now = sim.sim_time
        stamp = _stamp(now)
        clock = self.ros["Clock"]()
        clock.clock.sec, clock.clock.nanosec = stamp
        self.clock.publish(clock)
        if self.odom and now + 1e-9 >= self._next_odom:
            self._next_odom = now + 1.0 / self.settings.odom_hz
            self._publish_odom(stamp)
        if now + 1e-9 >= self._next_fleet:
            self._next_fleet = now + 1.0 / self.settings.fleet_hz
            self._publish_fleet(stamp)
        if self.scan_pubs:
            self._publish_scans()

    def _poses(self) -> tuple[np.ndarray, np.ndarray]:
        rows = self.sim.world.bodies.rows(self._handles)
        return self.sim.world.bodies["pos"][rows], self.sim.world.bodies["quat"][rows]

    def _publish_odom(self, stamp: tuple[int, int]) -> None:
        pos, quat = self._poses()
        agents = self.sim.world.motion.agents
        rows = agents.rows(self._motion)
        vel, yaw_rate = agents["vel"][rows], agents["yaw_rate"][rows]
        x, y, z, w = quat.T
        yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        c, s = np.cos(yaw), np.sin(yaw)
        forward, left = c * vel[:, 0] + s * vel[:, 1], -s * vel[:, 0] + c * vel[:, 1]
        poses = np.concatenate((pos, quat), axis=1)
        twists = np.stack((forward, left, yaw_rate), axis=1)
        for k, (serialized, publisher) in enumerate(zip(self._odom_bytes, self.odom, strict=True)):
            publisher.publish(serialized.fill(*stamp, poses[k], twists[k]))

    def _publish_fleet(self, stamp: tuple[int, int]) -> None:
        pos, quat = self._poses()
        ros = self.ros
        message = ros["PoseArray"]()
        message.header.frame_id = "map"
        message.header.stamp.sec, message.header.stamp.nanosec = stamp
        poses = []
        for p, q in zip(pos.tolist(), quat.tolist(), strict=True):
            pose = ros["Pose"]()
            pose.position.x, pose.position.y, pose.position.z = p
            pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q
            poses.append(pose)
        message.poses = poses
        self.fleet.publish(message)

    def _publish_scans(self) -> None:
        """The scans made this step of the robots' first lidars (read from their groups'
        arrays: Python only for the scans published)."""
        now = self.sim.sim_time
        for group in self.sim.lidars.groups:
            for slot in np.flatnonzero(group.stamps == now).tolist():
                k = self._scanners.get(int(group.ids[slot]))
                if k is None:
                    continue
                scan = group.scan_of(slot)
                message = self.ros["LaserScan"]()
                message.header.stamp.sec, message.header.stamp.nanosec = _stamp(scan.stamp)
                message.header.frame_id = f"{self.robots[k].name}/{scan.frame}"
                message.angle_min, message.angle_max = scan.angle_min, scan.angle_max
                message.angle_increment = scan.angle_increment
                message.range_min, message.range_max = scan.range_min, scan.range_max
                message.scan_time = 1.0 / group.params.rate
                message.ranges = scan.ranges.tolist()
                self.scan_pubs[k].publish(message)

    # -- the end ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop: no more hooks, the node and its context gone, the thread joined."""
        if self._closed:
            return
        self._closed = True
        self._hooks.remove()
        self._spinning = False
        self._thread.join(timeout=5)
        self._executor.shutdown()
        self.node.destroy_node()
        self._context.try_shutdown()

    def __enter__(self) -> Ros2Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _twist(data: bytes) -> tuple[float, ...]:
    """The six numbers (linear x y z, angular x y z) of a serialized geometry_msgs/Twist: CDR,
    six doubles after its 4-byte encapsulation header, little- or big-endian as it says."""
    if len(data) < 52:
        return (math.nan,) * 6  # (not a Twist: ignored as a bad one)
    order = "<" if data[1] == 1 else ">"
    return tuple(np.frombuffer(data, dtype=f"{order}f8", count=6, offset=4).tolist())


def _stamp(seconds: float) -> tuple[int, int]:
    """(sec, nanosec) of simulated `seconds`."""
    total = round(seconds * 1e9)
    return total // 1_000_000_000, total % 1_000_000_000
