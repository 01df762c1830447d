"""A user's ROS 2 node, run as a script in its own process by the tests (real rclpy): it
records what it hears and sends what it is told, then prints it all as JSON.

    python client.py '{"seconds": 6, "odom": ["r1"], "scan": ["r0"], "clock": true,
                       "cmd_vel": {"r1": [1.0, 3.0, 0.5, 0.0, 0.0]}}'

`cmd_vel` maps a robot to (from, to, linear x, linear y, angular z): sent every 50 ms of wall
time between `from` and `to` seconds after the start (NaN allowed, as "nan"). Also heard on
request: `tf`, `tf_static`, `battery` (robot names), `markers`, `doors`, `lifts` (true). Sent:
`goals` (NavigateToPose: robot, at, x, y, yaw, frame, cancel_at), `door_requests` ([at, door,
requester, mode]), `lift_requests` ([at, lift, session, type, floor]). `exit_at`: print what
was heard and leave at once then, mid-goal (a client that vanishes).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any

import rclpy
from geometry_msgs.msg import Twist
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rmf_door_msgs.msg import DoorRequest, DoorState
from rmf_lift_msgs.msg import LiftRequest, LiftState
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import BatteryState, LaserScan
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

LATCHED = QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
)


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
    listen(node, asked, heard)
    goals = Goals(node, asked.get("goals", []), heard)
    requests = Requests(node, asked, heard)
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
        goals.tick(now - start)
        requests.tick(now - start)
        if now - start >= asked.get("exit_at", math.inf):
            print(json.dumps({"heard": heard, "sent": {}}), flush=True)
            os._exit(0)
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


def transforms(m: TFMessage) -> list[list[object]]:
    out: list[list[object]] = []
    for t in m.transforms:
        v, r = t.transform.translation, t.transform.rotation
        out.append([stamp(t.header), t.header.frame_id, t.child_frame_id, v.x, v.y, v.z, r.z, r.w])
    return out


def listen(node: Node, asked: dict[str, Any], heard: dict[str, list[object]]) -> None:
    """Subscribe to what was asked for; each message appended to heard[topic]."""

    def keep(key: str, convert: Any) -> Any:
        heard[key] = []
        return lambda m: heard[key].append(convert(m))

    for name in asked.get("tf", []):
        node.create_subscription(TFMessage, f"/{name}/tf", keep(f"tf/{name}", transforms), 100)
    for name in asked.get("tf_static", []):
        topic = f"/{name}/tf_static"
        node.create_subscription(TFMessage, topic, keep(f"tf_static/{name}", transforms), LATCHED)
    for name in asked.get("battery", []):
        battery = keep(f"battery/{name}", lambda m: [stamp(m.header), m.percentage, m.voltage])
        node.create_subscription(BatteryState, f"/{name}/battery_state", battery, 10)
    if asked.get("markers"):
        for topic, qos in (("/site/markers", LATCHED), ("/fleet/markers", 10)):
            summary = keep(topic, lambda m: [[k.ns, k.type, len(k.points)] for k in m.markers])
            node.create_subscription(MarkerArray, topic, summary, qos)
    if asked.get("doors"):
        doors = keep("doors", lambda m: [m.door_name, m.current_mode.value])
        node.create_subscription(DoorState, "/door_states", doors, 100)
    if asked.get("lifts"):
        lift = keep(
            "lifts",
            lambda m: [m.lift_name, m.current_floor, m.destination_floor, m.door_state,
                       m.motion_state, m.session_id],
        )  # fmt: skip
        node.create_subscription(LiftState, "/lift_states", lift, 100)


class Goals:
    """NavigateToPose goals sent at their times; what became of each kept in heard."""

    def __init__(self, node: Node, goals: list[dict[str, Any]], heard: dict[str, Any]) -> None:
        self.node, self.goals, self.heard = node, goals, heard
        self.clients = {
            g["robot"]: ActionClient(node, NavigateToPose, f"/{g['robot']}/navigate_to_pose")
            for g in goals
        }
        self.sent: set[int] = set()
        self.handles: dict[int, Any] = {}
        for k, _ in enumerate(goals):
            heard[f"goal/{k}"] = {"feedback": [], "accepted": None, "status": None, "error": None}

    def tick(self, t: float) -> None:
        for k, goal in enumerate(self.goals):
            record = self.heard[f"goal/{k}"]
            if k not in self.sent and t >= goal["at"]:
                client = self.clients[goal["robot"]]
                if not client.server_is_ready():
                    continue
                self.sent.add(k)
                message = NavigateToPose.Goal()
                message.pose.header.frame_id = goal.get("frame", "map")
                message.pose.pose.position.x, message.pose.pose.position.y = goal["x"], goal["y"]
                message.pose.pose.orientation.z = math.sin(goal.get("yaw", 0.0) / 2)
                message.pose.pose.orientation.w = math.cos(goal.get("yaw", 0.0) / 2)
                feedback = record["feedback"]
                future = client.send_goal_async(
                    message, feedback_callback=lambda f, fb=feedback: fb.append(progress(f))
                )
                future.add_done_callback(lambda f, k=k: self._accepted(k, f.result()))
            handle = self.handles.get(k)
            if (
                handle is not None
                and t >= goal.get("cancel_at", math.inf)
                and "cancel" not in record
            ):
                record["cancel"] = True
                handle.cancel_goal_async()

    def _accepted(self, k: int, handle: Any) -> None:
        record = self.heard[f"goal/{k}"]
        record["accepted"] = handle.accepted
        if handle.accepted:
            self.handles[k] = handle
            handle.get_result_async().add_done_callback(lambda f: self._done(k, f.result()))

    def _done(self, k: int, answer: Any) -> None:
        record = self.heard[f"goal/{k}"]
        record["status"] = answer.status
        record["error"] = [answer.result.error_code, answer.result.error_msg]


def progress(f: Any) -> list[float]:
    """A feedback's distance left, time left and x."""
    fb = f.feedback
    eta = fb.estimated_time_remaining
    return [fb.distance_remaining, eta.sec + eta.nanosec * 1e-9, fb.current_pose.pose.position.x]


class Requests:
    """Door and lift requests sent at their times, counted from when the simulation subscribed."""

    def __init__(self, node: Node, asked: dict[str, Any], heard: dict[str, Any]) -> None:
        self.doors = sorted(asked.get("door_requests", []))
        self.lifts = sorted(asked.get("lift_requests", []))
        self.door_pub = node.create_publisher(DoorRequest, "/door_requests", 10)
        self.lift_pub = node.create_publisher(LiftRequest, "/lift_requests", 100)

        self.start: dict[str, float] = {}

    def since_heard(self, topic: str, publisher: Any, t: float) -> float:
        """Seconds since the simulation first subscribed to `topic` (-inf before: a message
        sent before anyone listens is lost, and a loaded machine may start the simulation late)."""
        if topic not in self.start:
            if publisher.get_subscription_count() == 0:
                return -math.inf
            self.start[topic] = t
        return t - self.start[topic]

    def tick(self, t: float) -> None:
        t_door = self.since_heard("doors", self.door_pub, t)
        while self.doors and t_door >= self.doors[0][0]:
            _, door, requester, mode = self.doors.pop(0)
            message = DoorRequest()
            message.door_name, message.requester_id = door, requester
            message.requested_mode.value = mode
            self.door_pub.publish(message)
        t_lift = self.since_heard("lifts", self.lift_pub, t)
        while self.lifts and t_lift >= self.lifts[0][0]:
            _, lift, session, kind, floor = self.lifts.pop(0)
            message = LiftRequest()
            message.lift_name, message.session_id = lift, session
            message.request_type, message.destination_floor = kind, floor
            message.door_state = message.DOOR_OPEN
            self.lift_pub.publish(message)


if __name__ == "__main__":
    main()
