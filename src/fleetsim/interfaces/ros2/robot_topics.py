"""What each robot publishes, from the arrays after each step: `odom`, `tf` (map -> odom ->
base_footprint), `tf_static` (its lidars' mounts), `battery_state` and `scan`.

Odometry and transforms go out as bytes refreshed in place (`cdr`): no message objects for
the thousands a second a fleet sends. Frames are the robot's name and a slash before
`odom`, `base_footprint` and the lidars' frames (`frame_prefix`), or bare for one navigation
stack per robot; `map` is shared.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.fleet.battery import Batteries
from fleetsim.geometry.quat import yaw_of
from fleetsim.interfaces.ros2.cdr import OdometryBytes, TransformsBytes

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore
    from fleetsim.interfaces.ros2.bridge import Ros2Settings

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def frames(name: str, settings: Ros2Settings) -> tuple[str, str]:
    """A robot's odometry and base frames."""
    prefix = f"{name}/" if settings.frame_prefix else ""
    return f"{prefix}odom", f"{prefix}base_footprint"


class RobotTopics:
    """Every robot's own outgoing topics (see the module's text)."""

    def __init__(
        self, sim: MultiRobotSimulationCore, robots: list[Any], ros: dict[str, Any], node: Any,
        settings: Ros2Settings,
    ) -> None:  # fmt: skip
        self.sim, self.robots, self.ros, self.settings = sim, robots, ros, settings
        names = [robot.name for robot in robots]
        self.odom = [node.create_publisher(ros["Odometry"], f"/{n}/odom", 10) for n in names]
        self.tf = (
            [node.create_publisher(ros["TFMessage"], f"/{n}/tf", 100) for n in names]
            if settings.tf
            else []
        )
        self.battery = [
            node.create_publisher(ros["BatteryState"], f"/{n}/battery_state", 10) for n in names
        ]
        self.scans = {
            k: node.create_publisher(ros["LaserScan"], f"/{n}/scan", ros["SensorQoS"])
            for k, (n, robot) in enumerate(zip(names, robots, strict=True))
            if robot.lidars
        }
        # the first lidar of each robot whose scans are published: its id -> the robot
        self._scanners = {robots[k].lidars[0].id: k for k in self.scans}
        self._odom_bytes: list[OdometryBytes] = []
        self._tf_bytes: list[TransformsBytes] = []
        for name in names:
            odom, base = frames(name, settings)
            msg = ros["Odometry"]()
            msg.header.frame_id, msg.child_frame_id = odom, base
            self._odom_bytes.append(OdometryBytes(msg, ros["serialize"]))
            if settings.tf:
                self._tf_bytes.append(
                    TransformsBytes(self._tf_message(odom, base), ros["serialize"])
                )
        self._handles = np.array([r.handle for r in robots], dtype=np.int64)
        self._motion = np.array([r.motion_handle for r in robots], dtype=np.int64)
        self.batteries = Batteries(settings.battery, len(robots))
        self._last_xy = self._poses()[0][:, :2].copy()
        self._last_battery = sim.sim_time
        self.static = self._publish_static(node, names)

    def _tf_message(self, odom: str, base: str) -> Any:
        ros = self.ros
        message = ros["TFMessage"]()
        pairs = [("map", odom)] if self.settings.map_to_odom else []
        for parent, child in [*pairs, (odom, base)]:
            transform = ros["TransformStamped"]()
            transform.header.frame_id, transform.child_frame_id = parent, child
            message.transforms.append(transform)
        return message

    def _publish_static(self, node: Any, names: list[str]) -> list[Any]:
        """Each robot's lidar mounts on its `tf_static` (latched: transient local), once."""
        ros, publishers = self.ros, []
        for name, robot in zip(names, self.robots, strict=True):
            if not robot.lidars:
                continue
            publisher = node.create_publisher(
                ros["TFMessage"], f"/{name}/tf_static", ros["Latched"]
            )
            message = ros["TFMessage"]()
            _, base = frames(name, self.settings)
            prefix = f"{name}/" if self.settings.frame_prefix else ""
            for lidar in robot.lidars:
                x, y, z, yaw = lidar.params.mount
                transform = ros["TransformStamped"]()
                transform.header.frame_id = base
                transform.header.stamp.sec, transform.header.stamp.nanosec = stamp(
                    self.sim.sim_time
                )
                transform.child_frame_id = f"{prefix}{lidar.params.frame}"
                t, r = transform.transform.translation, transform.transform.rotation
                t.x, t.y, t.z = x, y, z
                r.z, r.w = math.sin(yaw / 2), math.cos(yaw / 2)
                message.transforms.append(transform)
            publisher.publish(message)
            publishers.append(publisher)
        return publishers

    # -- each step ------------------------------------------------------------------------------

    def _poses(self) -> tuple[np.ndarray, np.ndarray]:
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        return bodies["pos"][rows], bodies["quat"][rows]

    def publish_odometry(self, when: tuple[int, int]) -> None:
        """Odometry and transforms of every robot, stamped `when`."""
        pos, quat = self._poses()
        agents = self.sim.world.motion.agents
        rows = agents.rows(self._motion)
        vel, yaw_rate = agents["vel"][rows], agents["yaw_rate"][rows]
        yaw = yaw_of(quat)
        c, s = np.cos(yaw), np.sin(yaw)
        forward, left = c * vel[:, 0] + s * vel[:, 1], -s * vel[:, 0] + c * vel[:, 1]
        poses = np.concatenate((pos, quat), axis=1)
        twists = np.stack((forward, left, yaw_rate), axis=1)
        for k, (serialized, publisher) in enumerate(zip(self._odom_bytes, self.odom, strict=True)):
            publisher.publish(serialized.fill(*when, poses[k], twists[k]))
        if not self.tf:
            return
        transforms = np.empty((2, 7)) if self.settings.map_to_odom else np.empty((1, 7))
        transforms[0] = IDENTITY
        for k, (tf, publisher) in enumerate(zip(self._tf_bytes, self.tf, strict=True)):
            transforms[-1] = poses[k]
            publisher.publish(tf.fill(*when, transforms))

    def publish_batteries(self, when: tuple[int, int]) -> None:
        """Each robot's battery (drained by its distance and time since the last), as
        sensor_msgs/BatteryState: the charge as `percentage` (0..1), what a simulated battery
        does not model (voltage, current, temperature...) NaN, as the message says."""
        now = self.sim.sim_time
        xy = self._poses()[0][:, :2]
        driven = np.linalg.norm(xy - self._last_xy, axis=1)
        self.batteries.update(now - self._last_battery, driven, driven > 1e-6)
        self._last_xy, self._last_battery = xy.copy(), now
        message = self.ros["BatteryState"]()
        nan = math.nan
        for name in ("voltage", "temperature", "current", "charge", "capacity", "design_capacity"):
            setattr(message, name, nan)
        message.power_supply_status = message.POWER_SUPPLY_STATUS_DISCHARGING
        message.power_supply_technology = message.POWER_SUPPLY_TECHNOLOGY_LION
        message.power_supply_health = message.POWER_SUPPLY_HEALTH_GOOD
        message.present = True
        message.header.stamp.sec, message.header.stamp.nanosec = when
        for k, publisher in enumerate(self.battery):
            message.percentage = float(self.batteries.soc[k])
            message.header.frame_id = frames(self.robots[k].name, self.settings)[1]
            publisher.publish(message)

    def publish_scans(self) -> None:
        """The scans made this step of the robots' first lidars (read from their groups'
        arrays: Python only for the scans published)."""
        now = self.sim.sim_time
        prefix = self.settings.frame_prefix
        for group in self.sim.lidars.groups:
            for slot in np.flatnonzero(group.stamps == now).tolist():
                k = self._scanners.get(int(group.ids[slot]))
                if k is None:
                    continue
                scan = group.scan_of(slot)
                message = self.ros["LaserScan"]()
                message.header.stamp.sec, message.header.stamp.nanosec = stamp(scan.stamp)
                name = self.robots[k].name
                message.header.frame_id = f"{name}/{scan.frame}" if prefix else scan.frame
                message.angle_min, message.angle_max = scan.angle_min, scan.angle_max
                message.angle_increment = scan.angle_increment
                message.range_min, message.range_max = scan.range_min, scan.range_max
                message.scan_time = 1.0 / group.params.rate
                message.ranges = scan.ranges.tolist()
                self.scans[k].publish(message)


def stamp(seconds: float) -> tuple[int, int]:
    """(sec, nanosec) of simulated `seconds`."""
    total = round(seconds * 1e9)
    return total // 1_000_000_000, total % 1_000_000_000
