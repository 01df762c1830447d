"""A user's ROS 2 node (plain rclpy, nothing of fleetsim): it sends each of ten robots a
NavigateToPose goal three metres ahead of where its odometry says it is, listens to their
odometry, and prints how the goals ended. `main.py` starts it beside the simulation; on a
machine with ROS 2 it runs the same against `fleetsim ros2`.
    python node.py amr_0 amr_1 ... [--seconds 20]
"""

from __future__ import annotations

import argparse
import time

import rclpy
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient

SUCCEEDED = 4


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("robots", nargs="+")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("drive_ten")
    where: dict[str, Odometry] = {}
    for name in args.robots:
        node.create_subscription(
            Odometry, f"/{name}/odom", lambda m, n=name: where.__setitem__(n, m), 10
        )
    clients = {n: ActionClient(node, NavigateToPose, f"/{n}/navigate_to_pose") for n in args.robots}
    sent: set[str] = set()
    ended: dict[str, int] = {}
    start = time.monotonic()
    while time.monotonic() - start < args.seconds and len(ended) < len(args.robots):
        rclpy.spin_once(node, timeout_sec=0.05)
        for name, client in clients.items():
            if name in sent or name not in where or not client.server_is_ready():
                continue
            goal = NavigateToPose.Goal()
            goal.pose.header.frame_id = "map"
            here = where[name].pose.pose.position
            goal.pose.pose.position.x, goal.pose.pose.position.y = here.x + 3.0, here.y
            goal.pose.pose.orientation.w = 1.0
            sent.add(name)
            client.send_goal_async(goal).add_done_callback(
                lambda f, n=name: (
                    f.result()
                    .get_result_async()
                    .add_done_callback(lambda r: ended.__setitem__(n, r.result().status))
                )
            )
    done = sum(status == SUCCEEDED for status in ended.values())
    print(f"goals sent: {len(sent)}, succeeded: {done}, odometry from {len(where)} robots")
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
