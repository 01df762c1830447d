"""Odometry serialized without message objects: each robot's `nav_msgs/Odometry` as CDR bytes
made once (rclpy's own serializer, with its frame names) and refreshed in place, the numbers
written where the first serialization put them.

In a serialized Odometry (CDR, after the 4-byte encapsulation header) the stamp is the first 8
bytes, and after the two frame names every number is a double, in one run: position (3),
orientation (4), the pose's covariance (36), linear and angular velocity (6), the twist's
covariance (36). Where that run starts depends on the names' lengths: it is found by a
sentinel in the template. Publishing the bytes (`publish_raw`) is what rclpy does with a
message after converting it, without the conversion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SENTINEL = -1.2345678901234567e300  # (a position x no robot has)
POSE = slice(0, 7)  # position, orientation, in the run of doubles
TWIST = (43, 44, 48)  # linear x, linear y, angular z


class OdometryBytes:
    """One robot's serialized Odometry, refreshed in place (`fill`, then `data`)."""

    def __init__(self, message: Any, serialize: Any) -> None:
        message.pose.pose.position.x = SENTINEL
        template = serialize(message)
        message.pose.pose.position.x = 0.0
        marker = np.array([SENTINEL], dtype="<f8").tobytes()
        start = template.find(marker)
        if start < 0 or template[1] != 1:  # (little-endian CDR, as Fast DDS writes)
            raise ValueError("unexpected Odometry serialization")
        self.buffer = bytearray(template)
        self.numbers = np.frombuffer(self.buffer, dtype="<f8", count=85, offset=start)
        self.stamp = np.frombuffer(self.buffer, dtype="<u4", count=2, offset=4)

    def fill(self, sec: int, nanosec: int, pose: np.ndarray, twist: np.ndarray) -> bytes:
        """The bytes with the stamp, the pose (7: x y z, qx qy qz qw) and the twist (3:
        forward, left, yaw rate)."""
        self.stamp[0], self.stamp[1] = sec, nanosec
        self.numbers[POSE] = pose
        self.numbers[list(TWIST)] = twist
        return bytes(self.buffer)
