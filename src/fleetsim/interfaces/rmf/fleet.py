"""`RmfFleet`: a simulation's robots as the fleet behind RMF's fleet-manager API.

The HTTP side never touches the simulation: it reads `snapshot` (rebuilt after every step, a
plain dict swapped in whole) and hands commands to `submit`, which queues them for the start of
the next step. Commands: navigate (drive straight to x, y and end on yaw, at `speed_limit` when
> 0), stop, teleop on/off. A finished command's id becomes the robot's
`last_completed_request`; a running one is reported in `destination_arrival` with the seconds
it still needs at the robot's top speed.
"""

from __future__ import annotations

import math
import queue
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.geometry import quat
from fleetsim.interfaces.serving import StepHooks
from fleetsim.objects.nearby import nearest_pickable

ARRIVED_M = 0.05  # a navigate command is done this close (and aligned)
ATTACH_RADIUS_M = 1.0


@dataclass
class Command:
    """A robot's running command."""

    cmd_id: int
    x: float
    y: float
    yaw: float


class RmfFleet:
    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Any],
        map_name: str = "L1",
        battery: BatteryParams | None = None,
        activities: dict[str, dict[str, list[list[float]]]] | None = None,
    ) -> None:
        fixed = [r.name for r in robots if not r.drives]
        if fixed:
            raise ConfigError(f"RMF robots drive; these have a fixed base: {', '.join(fixed[:5])}")
        self.sim, self.robots, self.map_name = sim, list(robots), map_name
        self.activities = check_activities(activities or {})
        self.index = {r.name: k for k, r in enumerate(self.robots)}
        n = len(self.robots)
        self.running: list[Command | None] = [None] * n
        self.completed: list[int | None] = [None] * n  # last_completed_request
        self.teleop = np.zeros(n, dtype=bool)
        self.batteries = Batteries(battery or BatteryParams(), n)
        self._handles = np.array([r.handle for r in self.robots])
        self._top_speed = np.array([r.spawn_params.max_linear_vel for r in self.robots])
        self._inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._last_xy = self._poses()[0]
        self.snapshot: dict[str, dict[str, Any]] = {}
        self._hooks: StepHooks | None = None
        self._publish()

    # -- the HTTP side ----------------------------------------------------------------------

    def submit(self, command: Callable[[], None]) -> None:
        """Run `command()` at the start of the next step (from any thread)."""
        self._inbox.put(command)

    def navigate(self, name: str, cmd_id: int, x: float, y: float, yaw: float,
                 speed_limit: float = 0.0) -> None:  # fmt: skip
        k = self.index[name]

        def go() -> None:
            robot = self.robots[k]
            limits = [speed_limit] if speed_limit > 0 else None
            robot.set_waypoints([[x, y]], [yaw], tolerance=ARRIVED_M, align_orientation=True,
                                speed_limits=limits)  # fmt: skip
            self.running[k] = Command(cmd_id, x, y, yaw)

        self.submit(go)

    def start_activity(self, name: str, cmd_id: int, path: list[list[float]]) -> None:
        """Drive `path` ([x, y, yaw] waypoints), ending on the last yaw; done like navigate."""
        k = self.index[name]

        def go() -> None:
            points = [p[:2] for p in path]
            yaws = [p[2] for p in path]
            self.robots[k].set_waypoints(points, yaws, tolerance=ARRIVED_M,
                                         align_orientation=True)  # fmt: skip
            x, y, yaw = path[-1]
            self.running[k] = Command(cmd_id, x, y, yaw)

        self.submit(go)

    def set_teleop(self, name: str, on: bool) -> None:
        """Teleop mode: the robot stops and RMF's navigate commands are refused until off."""
        k = self.index[name]

        def toggle() -> None:
            self.teleop[k] = on
            if on:
                self.robots[k].stop()
                self.running[k] = None

        self.submit(toggle)

    def set_attached(self, name: str, cmd_id: int, attach: bool) -> None:
        """Attach the nearest pickable object within `ATTACH_RADIUS_M` (a cart), or let go of
        what is attached; `last_completed_request` becomes `cmd_id` when done."""
        k = self.index[name]

        def toggle() -> None:
            robot = self.robots[k]
            if attach:
                cart = nearest_pickable(robot, ATTACH_RADIUS_M)
                if cart is not None:
                    robot.attach_object(cart)
            else:
                for cart in robot.get_attached_objects():
                    robot.detach_object(cart)
            self.completed[k] = cmd_id

        self.submit(toggle)

    def stop(self, name: str, stop_cmd_id: int | None = None) -> None:
        k = self.index[name]

        def halt() -> None:
            self.robots[k].stop()
            self.running[k] = None
            if stop_cmd_id is not None:
                self.completed[k] = stop_cmd_id

        self.submit(halt)

    # -- the simulation side ----------------------------------------------------------------

    def start(self) -> RmfFleet:
        self._hooks = StepHooks(self.sim, self.apply_inbound, self.report)
        return self

    def stop_serving(self) -> None:
        if self._hooks is not None:
            self._hooks.remove()
            self._hooks = None

    def apply_inbound(self) -> None:
        while True:
            try:
                command = self._inbox.get_nowait()
            except queue.Empty:
                return
            command()

    def report(self) -> None:
        """Finish the commands whose robots arrived, drain the batteries, and build the
        status snapshot."""
        xy, yaw = self._poses()
        for k, command in enumerate(self.running):
            if command is None:
                continue
            robot = self.robots[k]
            near = math.hypot(xy[k, 0] - command.x, xy[k, 1] - command.y) <= ARRIVED_M + 1e-6
            if near and not robot.is_moving:
                self.completed[k], self.running[k] = command.cmd_id, None
        driven = np.hypot(*(xy - self._last_xy).T)
        self._last_xy = xy
        busy = np.array([c is not None for c in self.running])
        self.batteries.update(self.sim.params.timestep, driven, busy)
        self._publish(xy, yaw)

    def _publish(self, xy: np.ndarray | None = None, yaw: np.ndarray | None = None) -> None:
        if xy is None or yaw is None:
            xy, yaw = self._poses()
        battery = self.batteries.percent.tolist()
        snapshot = {}
        for k, robot in enumerate(self.robots):
            command = self.running[k]
            arrival = None
            if command is not None:
                left = math.hypot(xy[k, 0] - command.x, xy[k, 1] - command.y)
                arrival = {"cmd_id": command.cmd_id, "duration": left / self._top_speed[k]}
            snapshot[robot.name] = {
                "robot_name": robot.name,
                "map_name": self.map_name,
                "position": {"x": float(xy[k, 0]), "y": float(xy[k, 1]), "yaw": float(yaw[k])},
                "battery": battery[k],
                "destination_arrival": arrival,
                "last_completed_request": self.completed[k],
                "replan": False,
            }
        self.snapshot = snapshot  # swapped in whole: readers see one step or the next

    def _poses(self) -> tuple[np.ndarray, np.ndarray]:
        bodies = self.sim.world.bodies
        rows = bodies.rows(self._handles)
        xy = np.array(bodies["pos"][rows, :2])
        return xy, quat.yaw_of(bodies["quat"][rows])


def check_activities(activities: Any) -> dict[str, dict[str, list[list[float]]]]:
    """`{activity: {label: [[x, y, yaw], ...]}}`, checked (a clear error naming the place)."""
    if not isinstance(activities, dict):
        raise ConfigError("activities: expected {activity: {label: [[x, y, yaw], ...]}}")
    out: dict[str, dict[str, list[list[float]]]] = {}
    for activity, labels in activities.items():
        if not isinstance(labels, dict):
            raise ConfigError(f"activities.{activity}: expected {{label: [[x, y, yaw], ...]}}")
        out[str(activity)] = {}
        for label, path in labels.items():
            where = f"activities.{activity}.{label}"
            if not isinstance(path, list) or not path:
                raise ConfigError(f"{where}: expected a non-empty list of [x, y, yaw]")
            points = []
            for j, p in enumerate(path):
                ok = (
                    isinstance(p, list | tuple)
                    and len(p) == 3
                    and all(
                        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                        for v in p
                    )
                )
                if not ok:
                    raise ConfigError(f"{where}[{j}]: expected [x, y, yaw] numbers, got {p!r}")
                points.append([float(v) for v in p])
            out[str(activity)][str(label)] = points
    return out
