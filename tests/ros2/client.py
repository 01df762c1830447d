"""A user's ROS 2 node, run as a script in its own process by the tests (real rclpy): it
records what it hears and sends what it is told, then prints it all as JSON.

    python client.py '{"seconds": 6, "odom": ["r1"], "scan": ["r0"], "clock": true,
                       "cmd_vel": {"r1": [1.0, 3.0, 0.5, 0.0, 0.0]}}'

`cmd_vel` maps a robot to (from, to, linear x, linear y, angular z): sent every 50 ms of wall
time between `from` and `to` seconds after the start (NaN allowed, as "nan").
"""

from __future__ import annotations

import json
import sys
import time

import rclpy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan


def stamp(header: object) -> float:
    return header.stamp.sec + header.stamp.nanosec * 1e-9  # type: ignore[attr-defined]


def main() -> None:
    asked = json.loads(sys.argv[1])
    rclpy.init()
    node = Node("test_client")
    heard: dict[str, list[object]] = {"clock": []}

    def odom(name: str, m: Odometry) -> None:
        p, t = m.pose.pose.position, m.twist.twist
        heard[f"odom/{name}"].append([stamp(m.header), p.x, p.y, t.linear.x, m.child_frame_id])

    def scan(name: str, m: LaserScan) -> None:
        heard[f"scan/{name}"].append([stamp(m.header), m.header.frame_id, list(m.ranges)])

    for name in asked.get("odom", []):
        heard[f"odom/{name}"] = []
        node.create_subscription(Odometry, f"/{name}/odom", lambda m, n=name: odom(n, m), 10)
    for name in asked.get("scan", []):
        heard[f"scan/{name}"] = []
        node.create_subscription(
            LaserScan, f"/{name}/scan", lambda m, n=name: scan(n, m), qos_profile_sensor_data
        )
    if asked.get("clock"):
        node.create_subscription(
            Clock,
            "/clock",
            lambda m: heard["clock"].append(m.clock.sec + m.clock.nanosec * 1e-9),
            10,
        )
    senders = {
        name: (node.create_publisher(Twist, f"/{name}/cmd_vel", 10), [float(v) for v in plan])
        for name, plan in asked.get("cmd_vel", {}).items()
    }
    sent: dict[str, int] = dict.fromkeys(senders, 0)
    start = time.monotonic()
    next_send = start
    while time.monotonic() - start < asked["seconds"]:
        rclpy.spin_once(node, timeout_sec=0.01)
        now = time.monotonic()
        if now < next_send:
            continue
        next_send = now + 0.05
        for name, (publisher, (begin, end, vx, vy, wz)) in senders.items():
            if begin <= now - start <= end:
                twist = Twist()
                twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
                publisher.publish(twist)
                sent[name] += 1
    print(json.dumps({"heard": heard, "sent": sent}))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
