"""`RmfFleet`: a simulation's robots as the fleet behind RMF's fleet-manager API.

The HTTP side never touches the simulation: it reads `board` (a `StatusBoard` built from arrays
after every step and swapped in whole) and hands commands to `submit`, which queues them for the
start of the next step. Commands: navigate (drive straight to x, y and end on yaw, at
`speed_limit` when > 0), activities (a path), stop, teleop on/off, attach/detach. A finished
command's id becomes the robot's `last_completed_request`; a running one is reported in
`destination_arrival` with the seconds it still needs at the robot's top speed. A robot whose
command has made no progress (moved 5 cm or turned 0.05 rad) for `blocked_after_s` reports
`replan: true`, RMF's cue to plan it another way.
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.geometry import quat
from fleetsim.interfaces.rmf import across
from fleetsim.interfaces.rmf.accepted import KEEP, AcceptedCommands
from fleetsim.interfaces.rmf.door_guard import DoorGuard
from fleetsim.interfaces.rmf.status import NO_COMMAND, StatusBoard
from fleetsim.interfaces.serving import FaultView, StepHooks
from fleetsim.objects.nearby import nearest_pickable

ARRIVED_M = 0.05  # a navigate command is done this close (and aligned)
ATTACH_RADIUS_M = 1.0
STALL_AFTER_S = 120.0  # held at a door not open this long: a stall (as the fleet manager's)
BLOCKED_AFTER_S = 5.0  # a robot with a command that has not moved this long reports `replan`
PROGRESS_M, PROGRESS_RAD = 0.05, 0.05  # less since the last progress is standing still


class RmfFleet:
    """The simulation side of the RMF fleet-manager API: commands queued by the HTTP side are
    applied at the start of a step, and a status board is put up after it."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Agent],
        map_name: str = "L1",
        battery: BatteryParams | None = None,
        activities: dict[str, dict[str, list[list[float]]]] | None = None,
        blocked_after_s: float = BLOCKED_AFTER_S,
    ) -> None:
        fixed = [r.name for r in robots if not r.drives]
        if fixed:
            raise ConfigError(f"RMF robots drive; these have a fixed base: {', '.join(fixed[:5])}")
        if not blocked_after_s > 0:
            raise ConfigError(f"blocked_after_s: expected seconds > 0, got {blocked_after_s!r}")
        self.sim, self.robots, self.map_name = sim, list(robots), map_name
        self.activities = check_activities(activities or {})
        self.blocked_after_s = blocked_after_s
        self.index = {r.name: k for k, r in enumerate(self.robots)}
        self.names = [r.name for r in self.robots]
        self._quoted = [json.dumps(name) for name in self.names]
        n = len(self.robots)
        self.cmd_id = np.full(n, NO_COMMAND, dtype=np.int64)  # the running command
        self.goal = np.zeros((n, 2))  # where it ends
        self.completed = np.full(n, NO_COMMAND, dtype=np.int64)  # last_completed_request
        self.teleop = np.zeros(n, dtype=bool)  # as the step applied it
        self.accepted = AcceptedCommands(self.cmd_id)  # as the HTTP side accepted it
        self.batteries = Batteries(battery or BatteryParams(), n)
        self._handles = np.array([r.handle for r in self.robots])
        self._top_speed = np.array([r.spawn_params.max_linear_vel for r in self.robots])
        self._inbox: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self._last_xy, self._last_yaw = self._poses()
        self._anchor = np.column_stack([self._last_xy, self._last_yaw])  # pose at last progress
        self._progress_at = np.zeros(n)  # sim time of the last progress (or command)
        self._hooks: StepHooks | None = None
        self._faults: FaultView | None = None  # what injected faults change in the status
        self._one_map: list[str] | None = None
        self._across: dict[int, across.Across] = {}  # robots on their way to another map
        self.human_sessions: set[str] = set()  # lift sessions asked in human mode (over HTTP)
        self.doors = DoorGuard(sim, self.robots, STALL_AFTER_S)  # held at doors not open
        self.board = self._board(self._last_xy, self._last_yaw)

    # -- the HTTP side ----------------------------------------------------------------------

    def status(self, name: str) -> dict[str, Any]:
        """Robot `name`'s status after the last step, as `status/` reports it."""
        return self.board.data(self.index[name])

    def submit(self, command: Callable[[], object]) -> None:
        """Run `command()` at the start of the next step (from any thread); what it returns
        is dropped."""
        self._inbox.put(command)

    def _accept(
        self, k: int, command: Callable[[], None], cmd_id: int = KEEP, teleop: bool | None = None
    ) -> None:
        """Submit robot `k`'s `command`, noting at once what it will make of the robot."""
        self.accepted.accept(k, cmd_id, teleop)

        def apply() -> None:
            self.accepted.applied(k)
            command()

        self.submit(apply)

    def navigate(
        self,
        name: str,
        cmd_id: int,
        x: float,
        y: float,
        yaw: float,
        speed_limit: float = 0.0,
        map_name: str = "",
    ) -> None:
        """Send robot `name` straight to (x, y), ending on `yaw`, at most `speed_limit` m/s when > 0
        (another map: by lift); `cmd_id` completes on arrival."""
        k = self.index[name]

        def go() -> None:
            self._give_up_across(k)
            site = self.sim.site
            if map_name and site is not None and map_name != json.loads(self._maps()[k]):
                here = self.robots[k].get_pose().position
                # (no way there: the command runs without progress, and RMF sees replan)
                with contextlib.suppress(FleetSimError):
                    self._across[k] = across.plan(site, here, x, y, yaw, map_name, f"rmf:{name}")
                self._run(k, cmd_id, x, y)
                return
            limits = [speed_limit] if speed_limit > 0 else None
            self.robots[k].set_waypoints(
                [[x, y]], [yaw], tolerance=ARRIVED_M, align_orientation=True, speed_limits=limits
            )
            self._run(k, cmd_id, x, y)

        self._accept(k, go, cmd_id)

    def start_activity(self, name: str, cmd_id: int, path: list[list[float]]) -> None:
        """Drive `path` ([x, y, yaw] waypoints), ending on the last yaw; done like navigate."""
        k = self.index[name]

        def go() -> None:
            points = [p[:2] for p in path]
            yaws = [p[2] for p in path]
            self.robots[k].set_waypoints(points, yaws, tolerance=ARRIVED_M, align_orientation=True)
            self._run(k, cmd_id, path[-1][0], path[-1][1])

        self._accept(k, go, cmd_id)

    def set_teleop(self, name: str, on: bool) -> None:
        """Teleop mode: the robot stops and RMF's navigate commands are refused until off."""
        k = self.index[name]

        def toggle() -> None:
            self.teleop[k] = on
            if on:
                self.robots[k].stop()
                self.cmd_id[k] = NO_COMMAND

        self._accept(k, toggle, NO_COMMAND if on else KEEP, teleop=on)

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
        """Stop robot `name` within its deceleration; `stop_cmd_id` becomes its last completed
        request."""
        k = self.index[name]

        def halt() -> None:
            self._give_up_across(k)
            self.robots[k].stop()
            self.cmd_id[k] = NO_COMMAND
            if stop_cmd_id is not None:
                self.completed[k] = stop_cmd_id

        self._accept(k, halt, NO_COMMAND)

    def _give_up_across(self, k: int) -> None:
        """A new command: a ride to another map under way is dropped (its lift let go)."""
        gone = self._across.pop(k, None)
        if gone is not None and self.sim.lifts is not None:
            self.sim.lifts.rides.cancel(gone.requester)

    def _run(self, k: int, cmd_id: int, x: float, y: float) -> None:
        self.doors.forget(k)
        self.cmd_id[k], self.goal[k] = cmd_id, (x, y)
        self._progress_at[k] = self.sim.sim_time
        self._anchor[k] = (*self._last_xy[k], self._last_yaw[k])

    # -- the simulation side ----------------------------------------------------------------

    def start(self) -> RmfFleet:
        """Hook into the simulation's steps (inbox before, status board after); returns itself."""
        self._hooks = StepHooks(self.sim, self.apply_inbound, self.report)
        self._faults = FaultView(self.sim, self.names)
        return self

    def stop_serving(self) -> None:
        """Unhook from the simulation."""
        if self._hooks is not None:
            self._hooks.remove()
            self._hooks = None
        if self._faults is not None:
            self._faults.remove()
            self._faults = None

    def apply_inbound(self) -> None:
        """Apply every queued command, in the order accepted."""
        while True:
            try:
                command = self._inbox.get_nowait()
            except queue.Empty:
                return
            command()

    def report(self) -> None:
        """Finish the commands whose robots arrived, note which are blocked, drain the
        batteries, and put up the next status board."""
        xy, yaw = self._poses()
        running = self.cmd_id != NO_COMMAND
        left = np.hypot(*(xy - self.goal).T)
        crossing = np.zeros(len(self.robots), dtype=bool)
        for k, way in list(self._across.items()):  # navigates to another map, by lift
            crossing[k] = not across.step(way, self.robots[k], self.sim.lifts)
            if not crossing[k]:
                del self._across[k]  # (the lift is let go by its service once out of the shaft)
        if self.doors.doors:  # (a site with doors: held short of those not open)
            self.doors.step(xy, self._heights(), running)
        for k in np.flatnonzero(running & ~crossing & (left <= ARRIVED_M + 1e-6)).tolist():
            if not self.robots[k].is_moving:  # aligned too
                self.completed[k], self.cmd_id[k] = self.cmd_id[k], NO_COMMAND
        moved = np.hypot(*(xy - self._anchor[:, :2]).T) > PROGRESS_M
        moved |= np.abs(quat.wrap_angle(yaw - self._anchor[:, 2])) > PROGRESS_RAD
        self._progress_at[moved] = self.sim.sim_time
        self._anchor[moved] = np.column_stack([xy, yaw])[moved]
        driven = np.hypot(*(xy - self._last_xy).T)
        self._last_xy, self._last_yaw = xy, yaw
        self.batteries.update(self.sim.params.timestep, driven, self.cmd_id != NO_COMMAND)
        self.board = self._board(xy, yaw, left)

    def _board(
        self, xy: np.ndarray, yaw: np.ndarray, left: np.ndarray | None = None
    ) -> StatusBoard:
        if left is None:
            left = np.hypot(*(xy - self.goal).T)
        running = self.cmd_id != NO_COMMAND
        replan = running & (self.sim.sim_time - self._progress_at >= self.blocked_after_s)
        if self._faults is not None and self._faults.any_offset:  # a localisation jump
            xy = xy + self._faults.offsets
        return StatusBoard.build(
            self.names,
            self._quoted,
            self._maps(),
            xy,
            yaw,
            self.batteries.percent,
            self.cmd_id,
            left / self._top_speed,
            self.completed,
            replan,
        )

    def _maps(self) -> list[str]:
        """Each robot's map_name (JSON): its building level, by its height, on a site of
        several levels; else the fleet's map_name."""
        site = self.sim.site
        if site is None or len(site.graph.level_names) < 2:
            if self._one_map is None:
                self._one_map = [json.dumps(self.map_name)] * len(self.robots)
            return self._one_map
        z = self.sim.world.bodies["pos"][self.sim.world.bodies.rows(self._handles), 2]
        return [json.dumps(site.level_at(float(h))) for h in z.tolist()]

    def _heights(self) -> np.ndarray:
        bodies = self.sim.world.bodies
        z: np.ndarray = bodies["pos"][bodies.rows(self._handles), 2]
        return z

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
