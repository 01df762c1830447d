"""`VdaFleet`: a simulation's robots as VDA 5050 vehicles on an MQTT broker.

Once per step (a simulation callback) it applies what arrived since the last step (orders,
instant actions), lets each vehicle note the nodes it passed, and publishes a vehicle's `state`
when something happened to it and at least every `state_interval` simulated seconds. Publishing
hands the bytes to the MQTT sessions' own threads; the simulation never waits on the network.
With `visualization_rate` (Hz of simulated time) every vehicle also publishes `visualization`
(position and velocity) that often.
Each vehicle says ONLINE on its `connection` topic when its session connects, OFFLINE when the
fleet stops cleanly, and its last will says CONNECTIONBROKEN otherwise.

Instant actions: `cancelOrder` (or the `noOrderToCancel` error), `startPause`, `stopPause`,
`stateRequest`, `factsheetRequest`, `initPosition`, and `startCharging`, `stopCharging`, `wait`
(run like node actions); any other is answered with an error naming it, never ignored.
Batteries: each vehicle's charge follows `fleetsim.fleet.battery` (drained by distance and
time, charged between `startCharging` and `stopCharging`), reported as `batteryState`.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError
from fleetsim.faults.network import MessageFate, MessageFaults
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.geometry import quat
from fleetsim.interfaces.serving import FaultView, StepHooks
from fleetsim.interfaces.vda5050.effects import unsupported
from fleetsim.interfaces.vda5050.encode import Motion
from fleetsim.interfaces.vda5050.factsheet import factsheet_of
from fleetsim.interfaces.vda5050.link import MqttLink
from fleetsim.interfaces.vda5050.lossy import LossyLink
from fleetsim.interfaces.vda5050.messages import (
    Action,
    ActionState,
    ActionStatus,
    Connection,
    ConnectionState,
    Error,
    ErrorLevel,
    InstantActions,
    Order,
    parse,
    timestamp,
    warning,
)
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle
from fleetsim.state import DriveState

BATTERY_EVERY_S = 0.1  # the battery model's update period, simulated s


class VdaFleet:
    """A simulation's robots as VDA 5050 vehicles on an MQTT broker: orders and instant actions
    applied at the start of a step, states and visualizations published after it."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Agent],
        broker: str,
        topics: Topics | None = None,
        state_interval: float = 1.0,
        mode: str = "per-vehicle",
        epoch: float | None = None,
        visualization_rate: float = 0.0,
        battery: BatteryParams | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: str | None = None,
        map_id: str = "site",
        network: MessageFaults | None = None,
    ) -> None:
        self.sim, self.topics = sim, topics or Topics()
        self.vehicles = {
            r.name: Vehicle(r, self.topics, sim.site, map_id, sim.lifts) for r in robots
        }
        self.state_interval = float(state_interval)
        if not (self.state_interval > 0 and visualization_rate >= 0):
            raise ConfigError("state_interval must be > 0 s and visualization_rate >= 0 Hz")
        # visualization messages this often (simulated Hz; 0 = none)
        self.visualization_every = 1.0 / visualization_rate if visualization_rate else 0.0
        self._next_visual = 0.0
        # wall-clock seconds (Unix time) of simulated time 0, for timestamps: fixed, or taken
        # when the fleet starts (None)
        self.epoch = epoch if epoch is not None else time.time() - sim.sim_time
        self._fixed_epoch = epoch
        self._serials = list(self.vehicles)
        self._index = {serial: k for k, serial in enumerate(self._serials)}
        # next periodic state of each, simulated s: spread over the interval, not all at once
        self._due = np.arange(len(self._serials)) * (self.state_interval / max(len(robots), 1))
        self._active: set[str] = set()  # driving or working: watched every step
        n = len(self._serials)
        self._on = np.zeros(n, dtype=bool)  # the same, as an array
        self._goal = np.full((n, 2), np.nan)  # the next base node each is driving to
        self._reach = np.zeros(n)  # how close counts as there
        self._always = np.zeros(n, dtype=bool)  # stepped every step (actions, paused)
        self.batteries = Batteries(battery or BatteryParams(), len(self._serials))
        fixed = [r.name for r in robots if not r.drives]
        if fixed:
            raise ConfigError(
                f"VDA 5050 vehicles drive; these robots have a fixed base: {', '.join(fixed[:5])}"
            )
        self._handles = np.array([v.robot.handle for v in self.vehicles.values()])
        self._motion_handles = np.array([v.robot.motion_handle for v in self.vehicles.values()])
        self._last_xy = self._positions()
        self._next_battery = 0.0
        broken = ConnectionState.CONNECTIONBROKEN
        self.link = MqttLink(
            self.topics,
            list(self.vehicles),
            broker,
            mode=mode,
            will=lambda s: self._connection(s, broken),
            username=username,
            password=password,
            tls_ca=tls_ca,
        )
        self._online: queue.SimpleQueue[str] = queue.SimpleQueue()  # sessions (re)connected
        self.link.on_connect = self._online.put
        # messages go through the network faults, when there are any
        self._net: MqttLink | LossyLink = self.link
        if network is not None and network.any:
            self._net = LossyLink(
                self.link, MessageFate(network), lambda: self.sim.sim_time, self._message_fault
            )
        self._dirty: set[str] = set()  # got a message this step
        self._hooks: StepHooks | None = None
        self._faults: FaultView | None = None
        self._breakdowns: dict[str, Error] = {}  # serial -> its breakdown, in its errors

    def start(self, timeout: float = 10.0) -> VdaFleet:
        """Connect, say ONLINE, and serve: messages are applied at the start of every step
        (`pre_step`), states published after it (`post_step`)."""
        self._due += self.sim.sim_time  # the first states spread over the next interval
        if self._fixed_epoch is None:
            self.epoch = time.time() - self.sim.sim_time  # the run starts now
        self.link.start(timeout)
        self._greet()
        self._hooks = StepHooks(self.sim, self.apply_inbound, self.report)
        self._faults = FaultView(self.sim, self._serials, self._fault)
        return self

    def _fault(self, serial: str, row: dict[str, Any], started: bool) -> None:
        """An injected fault: a breakdown is a FATAL error in the vehicle's state while it
        lasts; a localisation jump moves the position it reports. Its state goes out now."""
        vehicle = self.vehicles[serial]
        if row["kind"] == "breakdown":
            if started:
                error = Error(
                    error_type="breakdown",
                    error_level=ErrorLevel.FATAL,
                    error_description=f"the vehicle broke down at {row['time']:g} s "
                    f"(a fault; repaired at {row['until']:g} s)",
                )
                self._breakdowns[serial] = error
                vehicle.report(error)
            else:
                gone = self._breakdowns.pop(serial, None)
                vehicle.errors = [e for e in vehicle.errors if e is not gone]
        if row["kind"] == "disconnect":
            if started:
                self.link.cut(serial)
            else:
                self.link.restore(serial)
        if row["kind"] == "jump" and self._faults is not None:
            vehicle.reported_offset = tuple(self._faults.offsets[self._index[serial]])
        self._dirty.add(serial)

    def _message_fault(self, outcome: str, serial: str, topic: str, inbound: bool) -> None:
        """A message hit by a network fault: an event (and a row of the run's faults)."""
        now = self.sim.sim_time
        row = {
            "time": now,
            "kind": f"message_{outcome}",
            "target": serial,
            "duration": 0.0,
            "topic": topic,
            "direction": "in" if inbound else "out",
            "until": now,
            "by": "vda5050",
        }
        self.sim.events.emit("fault_started", self.sim, row)

    @property
    def network_counts(self) -> dict[str, int]:
        """Messages hit by network faults so far, by outcome (all 0 without any)."""
        if isinstance(self._net, LossyLink):
            return dict(self._net.fate.counts)
        return dict.fromkeys(("drop", "delay", "duplicate", "reorder"), 0)

    def stop(self) -> None:
        """Unhook from the simulation, send OFFLINE on every vehicle's connection topic and
        disconnect."""
        if self._hooks is not None:
            self._hooks.remove()
            self._hooks = None
        if self._faults is not None:
            self._faults.remove()
            self._faults = None
        self.link.stop(goodbye=lambda s: self._connection(s, ConnectionState.OFFLINE))

    # -- the step ---------------------------------------------------------------------------

    def step(self) -> None:
        """Both halves at once (for a loop that steps the simulation itself)."""
        self.apply_inbound()
        self.report()

    def apply_inbound(self) -> None:
        """Apply the orders and instant actions that arrived since the last step."""
        dirty = self._dirty
        self._greet()
        for message in self._net.take():
            vehicle = self.vehicles[message.serial]
            topic = self.topics.topic(message.serial, message.topic)
            if message.topic == "order":
                order = parse(Order, message.payload, topic)
                if isinstance(order, Error):
                    vehicle.report(order)
                else:
                    vehicle.take_order(order)
            else:
                actions = parse(InstantActions, message.payload, topic)
                if isinstance(actions, Error):
                    vehicle.report(actions)
                else:
                    for action in actions.actions:
                        self._instant(vehicle, action)
            dirty.add(message.serial)

    def report(self) -> None:
        """After the step: let vehicles pass nodes and run actions, and publish the state of
        each that got a message, passed a node, started or stopped, or is due. Only those
        vehicles (and the driving ones) do any work: a parked fleet costs one array comparison
        a step."""
        dirty, self._dirty = self._dirty, set()
        now = self.sim.sim_time
        due = {self._serials[k] for k in np.flatnonzero(self._due <= now).tolist()}
        dt = self.sim.params.timestep
        publish = list(due - self._active - dirty)  # idle and untouched: only its state
        for serial in self._to_step() | dirty:
            vehicle = self.vehicles[serial]
            k = self._index[serial]
            before = (
                vehicle.book.last_node_sequence_id,
                vehicle.robot.is_moving,
                len(vehicle.errors),
            )
            changed = vehicle.step(dt)
            self.batteries.charging[k] = vehicle.effects.charging
            self._watch(serial)
            after = (
                vehicle.book.last_node_sequence_id,
                vehicle.robot.is_moving,
                len(vehicle.errors),
            )
            if changed or after != before or serial in due or serial in dirty:
                publish.append(serial)
        stepped = set(publish)
        publish += [s for s in due & self._active if s not in stepped]  # due, driving on
        if publish:
            self._publish_states(publish, now)
        if isinstance(self._net, LossyLink):
            self._net.flush()
        if now >= self._next_battery:
            self._charge(now)
        if self.visualization_every and now >= self._next_visual:
            self._next_visual = now + self.visualization_every
            stamp = timestamp(self.epoch + now)
            for serial, m in zip(self._serials, self._motions(self._serials), strict=True):
                visual = self.vehicles[serial].visualization_json(stamp, m)
                self._net.publish(serial, "visualization", visual)

    def _to_step(self) -> set[str]:
        """The active vehicles that need their step now: those that reached the next node of
        their base, stopped, or have actions running (or are paused, or wait to drive on).
        The others drive on untouched: one array comparison for the lot."""
        ks = np.flatnonzero(self._on)
        if not len(ks):
            return set()
        world = self.sim.world
        bodies, agents = world.bodies, world.motion.agents
        xy = bodies["pos"][bodies.rows(self._handles[ks]), :2]
        moving = agents["state"][agents.rows(self._motion_handles[ks])] != int(DriveState.IDLE)
        with np.errstate(invalid="ignore"):  # no next node: NaN, never reached
            reached = np.hypot(*(xy - self._goal[ks]).T) <= self._reach[ks]
        need = ks[reached | ~moving | self._always[ks]]
        return {self._serials[k] for k in need.tolist()}

    def _watch(self, serial: str) -> None:
        """Note what to look at for `serial` until its next step."""
        k = self._index[serial]
        vehicle = self.vehicles[serial]
        on = vehicle.active
        self._on[k] = on
        if on:
            self._active.add(serial)
        else:
            self._active.discard(serial)
        goal = vehicle.next_stop()
        self._goal[k] = goal[:2] if goal is not None else (np.nan, np.nan)
        self._reach[k] = goal[2] if goal is not None else 0.0
        self._always[k] = bool(vehicle.work.busy or vehicle.paused)

    def _charge(self, now: float) -> None:
        """Drain and charge every battery over the time since the last update."""
        dt = now - (self._next_battery - BATTERY_EVERY_S)
        self._next_battery = now + BATTERY_EVERY_S
        xy = self._positions()
        driven = np.hypot(*(xy - self._last_xy).T)
        self._last_xy = xy
        self.batteries.update(max(dt, 0.0), driven, self._on)  # busy: driving or working

    def _positions(self) -> np.ndarray:
        bodies = self.sim.world.bodies
        xy = np.array(bodies["pos"][bodies.rows(self._handles), :2])
        return xy

    def _publish_states(self, serials: list[str], now: float) -> None:
        stamp = timestamp(self.epoch + now)
        percent = self.batteries.percent
        for serial, m in zip(serials, self._motions(serials), strict=True):
            k = self._index[serial]
            vehicle = self.vehicles[serial]
            vehicle.battery = float(percent[k])
            self._net.publish(serial, "state", vehicle.state_json(stamp, m))
            self._due[k] = now + self.state_interval

    def _motions(self, serials: list[str]) -> list[Motion]:
        """Pose and velocity of the vehicles `serials`, read from the arrays at once."""
        k = np.array([self._index[s] for s in serials], dtype=np.int64)
        world = self.sim.world
        bodies, agents = world.bodies, world.motion.agents
        rows = bodies.rows(self._handles[k])
        if self._faults is not None and self._faults.any_offset:  # a localisation jump
            xy = (bodies["pos"][rows, :2] + self._faults.offsets[k]).tolist()
        else:
            xy = bodies["pos"][rows, :2].tolist()
        yaw = quat.yaw_of(bodies["quat"][rows]).tolist()
        moving_rows = agents.rows(self._motion_handles[k])
        vel = agents["vel"][moving_rows, :2].tolist()
        omega = agents["yaw_rate"][moving_rows].tolist()
        driving = (agents["state"][moving_rows] != int(DriveState.IDLE)).tolist()
        return [
            Motion(p[0], p[1], t, v[0], v[1], w, d)
            for p, t, v, w, d in zip(xy, yaw, vel, omega, driving, strict=True)
        ]

    # -- instant actions --------------------------------------------------------------------

    def _instant(self, vehicle: Vehicle, action: Action) -> None:
        kind = action.action_type
        why = unsupported(action, "INSTANT")
        if why is not None:
            failed = ActionStatus.FAILED
            state = ActionState(
                action_id=action.action_id,
                action_type=kind,
                action_status=failed,
                result_description=why,
            )
            vehicle.actions[action.action_id] = state
            vehicle.report(warning("unsupportedActionError", why, **_names(action)))
            return
        if kind in ("startCharging", "stopCharging", "wait"):
            vehicle.work.start([action])  # runs through its states like a node action
            return
        state = ActionState(
            action_id=action.action_id, action_type=kind, action_status=ActionStatus.FINISHED
        )
        if kind == "cancelOrder":
            if not vehicle.cancel():
                state.action_status = ActionStatus.FAILED
                state.result_description = "there is no order to cancel"
                vehicle.report(warning("noOrderToCancel", "there is no order", **_names(action)))
        elif kind == "startPause":
            vehicle.pause()
        elif kind == "stopPause":
            vehicle.resume()
        elif kind == "factsheetRequest":
            self._publish_factsheet(vehicle.serial)
        elif kind == "initPosition":
            refused = vehicle.init_position(action)
            if refused is not None:
                state.action_status = ActionStatus.FAILED
                state.result_description = refused
                vehicle.report(warning("initPositionError", refused, **_names(action)))
        vehicle.actions[action.action_id] = state  # stateRequest: the state goes out this step

    # -- connection -------------------------------------------------------------------------

    def _greet(self) -> None:
        """ONLINE and the factsheet for each session (re)connected (from this thread)."""
        while not self._online.empty():
            serial = self._online.get_nowait()
            online = self._connection(serial, ConnectionState.ONLINE)
            self.link.publish(serial, "connection", online)
            self._publish_factsheet(serial)

    def _publish_factsheet(self, serial: str) -> None:
        vehicle = self.vehicles[serial]
        header = vehicle.header("factsheet", self.epoch + self.sim.sim_time)
        sheet = factsheet_of(vehicle.robot, header, self.state_interval)
        self.link.publish(serial, "factsheet", sheet.to_json())

    def _connection(self, serial: str, state: ConnectionState) -> str:
        vehicle = self.vehicles[serial]
        header = vehicle.header("connection", self.epoch + self.sim.sim_time)
        return Connection(**header, connection_state=state).to_json()


def _names(action: Action) -> dict[str, str]:
    return {"actionId": action.action_id, "actionType": action.action_type}
