"""Odometry serialized in place reads back, through rclpy's own deserializer, as the message
it stands for: stamp, frames, pose, twist, zero covariances."""

from __future__ import annotations

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message

from fleetsim.interfaces.ros2.cdr import OdometryBytes, TransformsBytes


def test_serialized_in_place_is_the_message() -> None:
    rng = np.random.default_rng(0)
    for name in ("r", "amr_12", "a-much-longer-robot-name"):  # (the numbers move with the names)
        message = Odometry()
        message.header.frame_id = "odom"
        message.child_frame_id = f"{name}/base_footprint"
        odometry = OdometryBytes(message, serialize_message)
        for _ in range(3):
            pose, twist = rng.normal(size=7), rng.normal(size=3)
            sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
            back = deserialize_message(odometry.fill(sec, nanosec, pose, twist), Odometry)
            assert (back.header.stamp.sec, back.header.stamp.nanosec) == (sec, nanosec)
            assert (back.header.frame_id, back.child_frame_id) == ("odom", f"{name}/base_footprint")
            p, o = back.pose.pose.position, back.pose.pose.orientation
            assert [p.x, p.y, p.z, o.x, o.y, o.z, o.w] == pose.tolist()
            t = back.twist.twist
            assert [t.linear.x, t.linear.y, t.angular.z] == twist.tolist()
            assert [t.linear.z, t.angular.x, t.angular.y] == [0.0, 0.0, 0.0]
            assert not any(back.pose.covariance) and not any(back.twist.covariance)


def test_transforms_serialized_in_place_are_the_message() -> None:
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    rng = np.random.default_rng(1)
    for frames in ([("map", "a/odom"), ("a/odom", "a/base_footprint")], [("odom", "b")]):
        message = TFMessage()
        for parent, child in frames:
            transform = TransformStamped()
            transform.header.frame_id, transform.child_frame_id = parent, child
            message.transforms.append(transform)
        tf = TransformsBytes(message, serialize_message)
        numbers = rng.normal(size=(len(frames), 7))
        back = deserialize_message(tf.fill(12, 345, numbers), TFMessage)
        for (parent, child), t, row in zip(frames, back.transforms, numbers, strict=True):
            assert (t.header.frame_id, t.child_frame_id) == (parent, child)
            assert (t.header.stamp.sec, t.header.stamp.nanosec) == (12, 345)
            v, r = t.transform.translation, t.transform.rotation
            assert [v.x, v.y, v.z, r.x, r.y, r.z, r.w] == row.tolist()
