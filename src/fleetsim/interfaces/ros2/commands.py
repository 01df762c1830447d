"""`cmd_vel`: every robot's velocity commands, taken on a thread of their own and applied at
the start of the next step, the latest per robot.

A generic rclpy executor builds its wait set anew for each callback: with thousands of
subscriptions that costs it milliseconds each time. Here all robots' subscriptions sit in one
wait set, every ready one is taken after each wait (as CDR bytes, read as six doubles at the
step: no message object), a few milliseconds between waits so that commands gather.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

log = logging.getLogger("fleetsim.interfaces.ros2")


class Commands:
    """The robots' `cmd_vel` subscriptions and what they heard (see the module's text)."""

    def __init__(
        self, world: Any, robots: list[Any], ros: dict[str, Any], node: Any, timeout: float
    ) -> None:
        self.world, self.robots, self.timeout, self.context = world, robots, timeout, node.context
        self._motion = np.array([r.motion_handle for r in robots], dtype=np.int64)
        # (a differential robot's sideways speed is 0 whatever the twist says)
        self._sideways = np.array(
            [r.spawn_params.motion_mode != "differential" for r in robots], dtype=bool
        )
        self.received = 0  # cmd_vel messages heard
        self.ignored = 0  # twists with a NaN or infinite field
        # called with (robot, the twist's six numbers) for each command as the step applies it
        self.on_command: Callable[[Any, tuple[float, ...]], None] | None = None
        self._inbox: collections.deque[tuple[int, Any]] = collections.deque()
        self._warned: set[int] = set()
        self.subs = [
            node.create_subscription(
                ros["Twist"],
                f"/{robot.name}/cmd_vel",
                lambda m, k=k: self._heard(k, m),
                10,
                raw=True,
            )
            for k, robot in enumerate(robots)
        ]
        self._spinning = bool(self.subs)  # (no robots' topics: nothing to wait for)
        self._thread = threading.Thread(target=self._spin, name="fleetsim-ros2-cmd", daemon=True)
        if self._spinning:
            self._thread.start()

    def _spin(self) -> None:
        try:
            from rclpy.impl.implementation_singleton import rclpy_implementation as rcl
        except ImportError:  # (another rclpy)
            log.error("ROS 2 bridge: this rclpy has no wait sets: cmd_vel is not heard")
            return
        subs = self.subs
        with contextlib.ExitStack() as held:
            for sub in subs:
                held.enter_context(sub.handle)
            held.enter_context(self.context.handle)
            waits = rcl.WaitSet(len(subs), 0, 0, 0, 0, 0, self.context.handle)
            index = {sub.handle.pointer: k for k, sub in enumerate(subs)}
            while self._spinning:
                try:
                    waits.clear_entities()
                    for sub in subs:
                        waits.add_subscription(sub.handle)
                    waits.wait(50_000_000)  # (ns)
                    for pointer in waits.get_ready_entities("subscription"):
                        k = index[pointer]
                        taken = subs[k].handle.take_message(subs[k].msg_type, True)
                        if taken is not None:
                            self._heard(k, taken[0])
                except Exception as exc:  # (the context shut down under it: done)
                    if self._spinning:
                        log.error("ROS 2 bridge: %s", exc)
                    return
                time.sleep(0.002)

    def _heard(self, k: int, msg: Any) -> None:
        """A `cmd_vel` arrived (the thread's): queued for the next step."""
        self.received += 1
        self._inbox.append((k, msg))

    def apply(self) -> list[int]:
        """Apply the commands that arrived, the latest per robot, all in one call to the
        motion arrays (the simulation's thread); returns the robots (indexes) commanded."""
        latest: dict[int, Any] = {}
        while self._inbox:
            k, msg = self._inbox.popleft()
            latest[k] = msg
        chosen, twists = [], []
        for k, data in latest.items():
            full = twist_of(data)
            twist = (full[0], full[1], full[5])
            robot = self.robots[k]
            if self.on_command is not None:
                self.on_command(robot, full)
            if not all(math.isfinite(v) for v in twist):
                self._ignore(k, twist)
            elif not robot.is_removed:
                chosen.append(k)
                twists.append(twist)
        if chosen:
            rows, t = np.array(chosen), np.array(twists)
            linear = np.column_stack((t[:, 0], np.where(self._sideways[rows], t[:, 1], 0.0)))
            until = self.world.time + self.timeout
            self.world.motion.set_velocities(self._motion[rows], linear, t[:, 2], until)
        return chosen

    def _ignore(self, k: int, twist: tuple[float, ...]) -> None:
        self.ignored += 1
        if k not in self._warned:
            self._warned.add(k)
            log.warning(
                "ROS 2 bridge: %s: a cmd_vel with a NaN or infinite field was ignored: %s",
                self.robots[k].name,
                twist,
            )

    def stop(self) -> None:
        """Stop taking commands (the thread joined)."""
        if self._spinning:
            self._spinning = False
            self._thread.join(timeout=5)


def twist_of(data: bytes) -> tuple[float, ...]:
    """The six numbers (linear x y z, angular x y z) of a serialized geometry_msgs/Twist: CDR,
    six doubles after its 4-byte encapsulation header, little- or big-endian as it says."""
    if len(data) < 52:
        return (math.nan,) * 6  # (not a Twist: ignored as a bad one)
    order = "<" if data[1] == 1 else ">"
    return tuple(np.frombuffer(data, dtype=f"{order}f8", count=6, offset=4).tolist())
