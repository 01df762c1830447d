"""ROS 2: a simulation's robots as ROS 2 robots over rclpy (`Ros2Bridge`, `fleetsim ros2`):
each robot's odometry, transforms, battery, scans, velocity commands and navigation goals
(`robot_topics`, `commands`, `navigation`), the site's doors and lifts as Open-RMF's
(`building`), markers (`markers`), bags (`bag`); `network` keeps the traffic on loopback
unless told otherwise. Needs `pip install ".[ros2]" ./ros2-interfaces` from fleetsim's source
tree (x86_64 Linux: the registry's ROS 2 Jazzy wheels, and the interfaces it lacks built from
their definitions)."""

from fleetsim.interfaces.ros2.bridge import Ros2Bridge, Ros2Settings
from fleetsim.interfaces.ros2.network import loopback_environment

__all__ = ["Ros2Bridge", "Ros2Settings", "loopback_environment"]
