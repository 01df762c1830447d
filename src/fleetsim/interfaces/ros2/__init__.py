"""ROS 2: a simulation's robots as ROS 2 robots over rclpy (`Ros2Bridge`, `fleetsim ros2`);
`network` keeps the traffic on loopback unless told otherwise. Needs `pip install
"fleetsim[ros2]"` (x86_64 Linux: the registry's ROS 2 Jazzy wheels)."""

from fleetsim.interfaces.ros2.bridge import Ros2Bridge, Ros2Settings
from fleetsim.interfaces.ros2.network import loopback_environment

__all__ = ["Ros2Bridge", "Ros2Settings", "loopback_environment"]
