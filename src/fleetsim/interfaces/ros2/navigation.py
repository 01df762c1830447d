"""`navigate_to_pose`: each robot's nav2_msgs/action/NavigateToPose server, driven by
fleetsim's routing on the site (`GoToPose`: along the lanes to the node nearest the goal,
then straight to it; without a site, straight there).

The servers live on the bridge's service node, whose executor thread takes goals and cancels;
each goal's execution waits (a coroutine, no thread held) for the simulation's thread, which
starts it at the next step, sends feedback (the pose, the time so far, the estimated time
left, the distance left) and ends it. As Nav2 does, a goal that cannot be done is accepted and
then aborted, with the reason in `error_msg`: a pose not finite, a frame other than `map` or
the robot's odometry frame, a pose inside a wall or blocked cell, one on another floor, no
route. A new goal for a robot aborts the one it had (as Nav2 preempts); so does a `cmd_vel`
taking over. A goal whose client vanished (nothing listens to its feedback any more) is
cancelled and the robot stopped.
"""

from __future__ import annotations

import collections
import functools
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fleetsim.actions.base import ActionStatus
from fleetsim.actions.pose_route import GoToPose, obstacle_at
from fleetsim.geometry.quat import yaw_of
from fleetsim.interfaces.ros2.robot_topics import frames, stamp

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore
    from fleetsim.interfaces.ros2.bridge import Ros2Settings

log = logging.getLogger("fleetsim.interfaces.ros2")

UNKNOWN = 9000  # Nav2's error codes (NavigateToPose's result, from Kilted on; any uint16 fits)
TF_ERROR = 9002
CLIENT_CHECK_S = 1.0  # wall seconds between looks for goals whose clients vanished


@dataclass
class _Goal:
    handle: Any  # rclpy's ServerGoalHandle
    done: Any  # the rclpy Future the execution awaits
    action: GoToPose | None = None
    started: float = 0.0


class Navigation:
    """Every robot's NavigateToPose server (see the module's text)."""

    def __init__(
        self, sim: MultiRobotSimulationCore, robots: list[Any], ros: dict[str, Any], node: Any,
        executor: Any, settings: Ros2Settings,
    ) -> None:  # fmt: skip
        self.sim, self.robots, self.ros, self.settings = sim, robots, ros, settings
        self.node, self.executor = node, executor
        self.action = ros["NavigateToPose"]
        self._new: collections.deque[tuple[int, _Goal]] = collections.deque()
        self.active: dict[int, _Goal] = {}
        self.servers = [
            ros["ActionServer"](
                node,
                self.action,
                f"/{robot.name}/navigate_to_pose",
                execute_callback=functools.partial(self._execute, k),  # (a coroutine function)
                cancel_callback=lambda _: ros["CancelResponse"].ACCEPT,
            )
            for k, robot in enumerate(robots)
        ]
        self._next_feedback = sim.sim_time
        self._next_client_check = time.monotonic() + CLIENT_CHECK_S

    async def _execute(self, k: int, handle: Any) -> Any:
        """A goal accepted (the executor's thread): handed to the simulation, its end awaited."""
        goal = _Goal(handle, self.ros["Future"](executor=self.executor))
        self._new.append((k, goal))
        return await goal.done

    # -- the simulation's thread ------------------------------------------------------------------

    def start_new(self) -> None:
        """Start the goals that arrived (before the step)."""
        while self._new:
            k, goal = self._new.popleft()
            old = self.active.pop(k, None)
            if old is not None:
                self._end(old, "abort", UNKNOWN, "preempted by a new goal")
            reason, code = self._check(k, goal.handle.request.pose)
            if reason:
                log.warning("ROS 2 bridge: %s: goal aborted: %s", self.robots[k].name, reason)
                self._end(goal, "abort", code, reason)
                continue
            pose = goal.handle.request.pose.pose
            q = pose.orientation
            yaw = float(yaw_of([q.x, q.y, q.z, q.w]))
            robot = self.robots[k]
            goal.action = GoToPose(pose.position.x, pose.position.y, yaw)
            goal.started = self.sim.sim_time
            robot.clear_actions()
            robot.add_action(goal.action)
            self.active[k] = goal

    def _check(self, k: int, stamped: Any) -> tuple[str, int]:
        """Why a goal cannot be done ("" when it can) and the error code."""
        robot = self.robots[k]
        frame = stamped.header.frame_id
        allowed = ("map", frames(robot.name, self.settings)[0])
        if frame not in allowed:
            return f"unknown frame '{frame}' (goals are in {' or '.join(allowed)})", TF_ERROR
        p, q = stamped.pose.position, stamped.pose.orientation
        numbers = (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
        if not all(math.isfinite(v) for v in numbers):
            return f"the goal pose is not finite: {numbers}", UNKNOWN
        if not robot.drives:
            return f"{robot.name} has a fixed base and cannot drive", UNKNOWN
        site = self.sim.site
        here = robot.get_pose()
        if site is not None and len(site.elevations) > 1:
            goal_level, own = site.level_at(p.z), site.level_at(here.z)
            if goal_level != own:
                return (
                    f"the goal is on level '{goal_level}' (z {p.z:.2f} m) and {robot.name} on "
                    f"'{own}': goals stay on the robot's floor", UNKNOWN,
                )  # fmt: skip
        inside = obstacle_at(site, p.x, p.y, here.z)
        if inside:
            return f"the goal ({p.x:.2f}, {p.y:.2f}) is inside {inside}", UNKNOWN
        return "", 0

    def publish(self) -> None:
        """After the step: end the goals that are done, feedback for the others at
        `feedback_hz`, and cancel the goals whose clients vanished."""
        now = self.sim.sim_time
        feedback = now + 1e-9 >= self._next_feedback
        if feedback:
            self._next_feedback = now + 1.0 / self.settings.feedback_hz
        for k, goal in list(self.active.items()):
            robot, action = self.robots[k], goal.action
            assert action is not None
            if goal.handle.is_cancel_requested:
                self._stop(k)
                self._end(self.active.pop(k), "canceled", 0, "cancelled")
            elif action.status is ActionStatus.COMPLETED:
                self._end(self.active.pop(k), "succeed", 0, "")
            elif action.status is not ActionStatus.IN_PROGRESS or (
                robot.get_current_action() is not action
            ):
                why = action.error_message or "the robot was given other work (cmd_vel, actions)"
                self._end(self.active.pop(k), "abort", UNKNOWN, why)
            elif feedback:
                self._feedback(k, goal)
        if self.active and time.monotonic() >= self._next_client_check:
            self._next_client_check = time.monotonic() + CLIENT_CHECK_S
            self._drop_orphans()

    def preempt(self, k: int) -> None:
        """A `cmd_vel` took robot `k` over: its goal (if any) ends."""
        goal = self.active.pop(k, None)
        if goal is not None:
            self._end(goal, "abort", UNKNOWN, "a cmd_vel took over")

    def _feedback(self, k: int, goal: Any) -> None:
        robot, action = self.robots[k], goal.action
        message = self.action.Feedback()
        here = robot.get_pose()
        current = message.current_pose
        current.header.frame_id = "map"
        current.header.stamp.sec, current.header.stamp.nanosec = stamp(self.sim.sim_time)
        position, orientation = current.pose.position, current.pose.orientation
        position.x, position.y, position.z = here.position
        orientation.x, orientation.y, orientation.z, orientation.w = here.orientation
        left = action.remaining(robot)
        message.distance_remaining = left
        message.navigation_time.sec, message.navigation_time.nanosec = stamp(
            self.sim.sim_time - goal.started
        )
        speed = max(robot.spawn_params.max_linear_vel, 1e-6)
        eta = stamp(left / speed)
        message.estimated_time_remaining.sec, message.estimated_time_remaining.nanosec = eta
        goal.handle.publish_feedback(message)

    def _drop_orphans(self) -> None:
        for k in list(self.active):
            topic = f"/{self.robots[k].name}/navigate_to_pose/_action/feedback"
            if self.node.count_subscribers(topic) == 0:
                log.warning("ROS 2 bridge: %s: the goal's client is gone: stopped", topic)
                self._stop(k)
                self._end(self.active.pop(k), "abort", UNKNOWN, "the client vanished")

    def _stop(self, k: int) -> None:
        robot = self.robots[k]
        if not robot.is_removed:
            robot.clear_actions()
            robot.stop()

    def _end(self, goal: _Goal, how: str, code: int, why: str) -> None:
        """End a goal: `how` is succeed, abort or canceled; the result carries `code` and
        `why`."""
        result = self.action.Result()
        result.error_code, result.error_msg = code, why
        try:
            getattr(goal.handle, how)()
        except Exception as exc:  # (a goal the server already dropped)
            log.debug("ROS 2 bridge: ending a goal: %s", exc)
        goal.done.set_result(result)

    def close(self) -> None:
        """Abort what is still running (their clients hear it) and destroy the servers."""
        for k, goal in self.active.items():
            self._stop(k)
            self._end(goal, "abort", UNKNOWN, "the simulation stopped")
        self.active.clear()
        for server in self.servers:
            server.destroy()
