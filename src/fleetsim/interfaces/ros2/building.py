"""The site's doors and lifts as Open-RMF's building systems publish them, so RMF's own nodes
(its door and lift supervisors, fleet adapters) could drive them:

- `door_states` (rmf_door_msgs/DoorState, reliable, depth 100) once a simulated second per
  door and at once when its mode changes; `door_requests` (rmf_door_msgs/DoorRequest): open
  (`MODE_OPEN`) or let go (any other mode) of a door on the requester's behalf;
- `lift_states` (rmf_lift_msgs/LiftState) likewise; `lift_requests` (rmf_lift_msgs/LiftRequest):
  `REQUEST_AGV_MODE` or `REQUEST_HUMAN_MODE` asks for the cabin at `destination_floor` in the
  session `session_id`, `REQUEST_END_SESSION` ends it. fleetsim's lifts open their doors
  whenever the cabin stands for its session (RMF's AGV mode) in either mode.

A request for a door, lift or floor the site does not have is logged and dropped, as RMF's
simulated doors and lifts do.
"""

from __future__ import annotations

import collections
import logging
from typing import TYPE_CHECKING, Any

from fleetsim.devices.doors import DoorMode
from fleetsim.errors import FleetSimError
from fleetsim.interfaces.ros2.robot_topics import stamp

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore

log = logging.getLogger("fleetsim.interfaces.ros2")

PUBLISH_S = 1.0  # as RMF's simulated doors and lifts


class Building:
    """The doors' and lifts' topics (see the module's text)."""

    def __init__(self, sim: MultiRobotSimulationCore, ros: dict[str, Any], node: Any) -> None:
        self.sim, self.ros = sim, ros
        depth = ros["Reliable"](100)
        self.door_pub = node.create_publisher(ros["DoorState"], "/door_states", depth)
        self.lift_pub = node.create_publisher(ros["LiftState"], "/lift_states", depth)
        self._inbox: collections.deque[tuple[str, Any]] = collections.deque()
        self.subs = [
            node.create_subscription(
                ros["DoorRequest"], "/door_requests", lambda m: self._inbox.append(("door", m)), 10
            ),
            node.create_subscription(
                ros["LiftRequest"],
                "/lift_requests",
                lambda m: self._inbox.append(("lift", m)),
                depth,
            ),
        ]
        self._last: dict[str, tuple[Any, ...]] = {}  # each device's last state published
        self._next = sim.sim_time

    def apply(self) -> None:
        """The requests that arrived (before the step)."""
        while self._inbox:
            kind, message = self._inbox.popleft()
            try:
                (self._door if kind == "door" else self._lift)(message)
            except FleetSimError as exc:
                log.warning("ROS 2 bridge: %s request dropped: %s", kind, exc)

    def _door(self, m: Any) -> None:
        doors = self.sim.doors
        if doors is None:
            raise FleetSimError(f"no doors on this site (asked for '{m.door_name}')")
        wanted = m.requested_mode.value == m.requested_mode.MODE_OPEN
        doors.request(m.door_name, m.requester_id or "ros2", wanted)

    def _lift(self, m: Any) -> None:
        lifts = self.sim.lifts
        if lifts is None:
            raise FleetSimError(f"no lifts on this site (asked for '{m.lift_name}')")
        if m.request_type == m.REQUEST_END_SESSION:
            lifts.release(m.lift_name, m.session_id)
        else:
            lifts.request(m.lift_name, m.session_id, m.destination_floor)

    def publish(self) -> None:
        """Each door's and lift's state once a second, and at once when it changes."""
        now = self.sim.sim_time
        due = now + 1e-9 >= self._next
        if due:
            self._next = now + PUBLISH_S
        when = stamp(now)
        for door in self.sim.doors.doors.values() if self.sim.doors is not None else ():
            key: tuple[Any, ...] = ("door", door.mode)
            if due or self._last.get(door.name) != key:
                self._last[door.name] = key
                self.door_pub.publish(self._door_state(door, when))
        for lift in self.sim.lifts.lifts.values() if self.sim.lifts is not None else ():
            message = self._lift_state(lift, when)
            key = ("lift", message.current_floor, message.destination_floor, message.door_state,
                   message.motion_state, message.current_mode, message.session_id)  # fmt: skip
            if due or self._last.get(lift.name) != key:
                self._last[lift.name] = key
                self.lift_pub.publish(message)

    def _door_state(self, door: Any, when: tuple[int, int]) -> Any:
        message = self.ros["DoorState"]()
        message.door_time.sec, message.door_time.nanosec = when
        message.door_name = door.name
        mode = message.current_mode
        mode.value = {
            DoorMode.CLOSED: mode.MODE_CLOSED,
            DoorMode.OPEN: mode.MODE_OPEN,
        }.get(door.mode, mode.MODE_MOVING)
        return message

    def _lift_state(self, lift: Any, when: tuple[int, int]) -> Any:
        message = self.ros["LiftState"]()
        message.lift_time.sec, message.lift_time.nanosec = when
        message.lift_name = lift.name
        message.available_floors = list(lift.levels)
        message.current_floor = lift.level
        message.destination_floor = lift.target or lift.level
        message.door_state = {
            DoorMode.CLOSED: message.DOOR_CLOSED,
            DoorMode.OPEN: message.DOOR_OPEN,
        }.get(lift.door, message.DOOR_MOVING)
        if lift.moving:
            up = lift.elevations[lift.target] > lift.z
            message.motion_state = message.MOTION_UP if up else message.MOTION_DOWN
        else:
            message.motion_state = message.MOTION_STOPPED
        message.available_modes = [message.MODE_HUMAN, message.MODE_AGV]
        message.current_mode = message.MODE_AGV if lift.in_service else message.MODE_OFFLINE
        message.session_id = lift.session or ""
        return message
