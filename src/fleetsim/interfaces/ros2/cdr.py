"""Messages serialized without message objects: each robot's `nav_msgs/Odometry` and
`tf2_msgs/TFMessage` as CDR bytes made once (rclpy's own serializer, with their frame names)
and refreshed in place, the numbers written where the first serialization put them.

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


STAMP_SENTINEL = 0x7EADBEEF  # (a header's seconds no simulation reaches: 67 years)


class TransformsBytes:
    """One robot's serialized TFMessage of `len(message.transforms)` transforms, refreshed in
    place: every header stamped alike, each transform's 7 numbers (translation, rotation).

    Each TransformStamped is its header (stamp, frame name), its child frame's name, then 7
    doubles; where each starts depends on the names: found by sentinels in the template."""

    def __init__(self, message: Any, serialize: Any) -> None:
        count = len(message.transforms)
        for k, transform in enumerate(message.transforms):
            transform.header.stamp.sec = STAMP_SENTINEL - k
            transform.transform.translation.x = SENTINEL * (1 + k)
        template = serialize(message)
        if template[1] != 1:
            raise ValueError("unexpected TFMessage serialization")
        self.buffer = bytearray(template)
        self.stamps, self.numbers = [], []
        for k, transform in enumerate(message.transforms):
            transform.header.stamp.sec, transform.transform.translation.x = 0, 0.0
            at = template.find(np.array([STAMP_SENTINEL - k], dtype="<i4").tobytes())
            start = template.find(np.array([SENTINEL * (1 + k)], dtype="<f8").tobytes())
            if at < 0 or start < 0:
                raise ValueError("unexpected TFMessage serialization")
            self.stamps.append(np.frombuffer(self.buffer, dtype="<u4", count=2, offset=at))
            self.numbers.append(np.frombuffer(self.buffer, dtype="<f8", count=7, offset=start))
        self.count = count

    def fill(self, sec: int, nanosec: int, transforms: np.ndarray) -> bytes:
        """The bytes with every header's stamp and the transforms (count, 7: x y z, qx qy qz
        qw)."""
        for k in range(self.count):
            self.stamps[k][0], self.stamps[k][1] = sec, nanosec
            self.numbers[k][:] = transforms[k]
        return bytes(self.buffer)
