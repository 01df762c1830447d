"""`VdaFleet`: a simulation's robots as VDA 5050 vehicles on an MQTT broker.

Once per step (a simulation callback) it applies what arrived since the last step (orders,
instant actions), lets each vehicle note the nodes it passed, and publishes a vehicle's `state`
when something happened to it and at least every `state_interval` simulated seconds. Publishing
hands the bytes to the MQTT sessions' own threads; the simulation never waits on the network.
With `visualization_rate` (Hz of simulated time) every vehicle also publishes `visualization`
(position and velocity) that often.
Each vehicle says ONLINE on its `connection` topic when its session connects, OFFLINE when the
fleet stops cleanly, and its last will says CONNECTIONBROKEN otherwise.

Instant actions so far: `cancelOrder` (or the `noOrderToCancel` error), `startPause`,
`stopPause`, `stateRequest`; any other is answered with an error naming it, never ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError
from fleetsim.vda5050.link import MqttLink
from fleetsim.vda5050.messages import (
    Action,
    ActionState,
    ActionStatus,
    Connection,
    ConnectionState,
    Error,
    InstantActions,
    Order,
    parse,
    warning,
)
from fleetsim.vda5050.topics import Topics
from fleetsim.vda5050.vehicle import Vehicle

INSTANT = ("cancelOrder", "startPause", "stopPause", "stateRequest")


class VdaFleet:
    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        robots: Sequence[Any],
        broker: str,
        topics: Topics | None = None,
        state_interval: float = 1.0,
        mode: str = "per-vehicle",
        epoch: float = 0.0,
        visualization_rate: float = 0.0,
    ) -> None:
        self.sim, self.topics = sim, topics or Topics()
        self.vehicles = {r.name: Vehicle(r, self.topics, sim.site) for r in robots}
        self.state_interval = float(state_interval)
        if not (self.state_interval > 0 and visualization_rate >= 0):
            raise ConfigError("state_interval must be > 0 s and visualization_rate >= 0 Hz")
        # visualization messages this often (simulated Hz; 0 = none)
        self.visualization_every = 1.0 / visualization_rate if visualization_rate else 0.0
        self._next_visual = 0.0
        self.epoch = epoch  # wall-clock seconds of simulated time 0 (timestamps)
        self._serials = list(self.vehicles)
        self._index = {serial: k for k, serial in enumerate(self._serials)}
        self._due = np.zeros(len(self._serials))  # next periodic state of each, simulated s
        self._moving: set[str] = set()  # driving at the last step: watched for changes
        broken = ConnectionState.CONNECTIONBROKEN
        self.link = MqttLink(self.topics, list(self.vehicles), broker, mode=mode,
                             will=lambda s: self._connection(s, broken))  # fmt: skip
        self.link.on_connect = self._online
        self._callback: int | None = None

    def start(self, timeout: float = 10.0) -> VdaFleet:
        self.link.start(timeout)
        self._callback = self.sim.register_callback(lambda *_: self.step())
        return self

    def stop(self) -> None:
        if self._callback is not None:
            self.sim.unregister_callback(self._callback)
            self._callback = None
        self.link.stop(goodbye=lambda s: self._connection(s, ConnectionState.OFFLINE))

    # -- the step ---------------------------------------------------------------------------

    def step(self) -> None:
        """Apply what arrived; publish the state of each vehicle that got a message, passed
        a node, started or stopped, or is due. Only those vehicles (and the driving ones) do
        any work: a parked fleet costs one array comparison a step."""
        dirty = set()
        for message in self.link.take():
            vehicle = self.vehicles[message.serial]
            topic = self.topics.topic(message.serial, message.topic)
            if message.topic == "order":
                order = parse(Order, message.payload, topic)
                if isinstance(order, Error):
                    vehicle.errors.append(order)
                else:
                    vehicle.take_order(order)
            else:
                actions = parse(InstantActions, message.payload, topic)
                if isinstance(actions, Error):
                    vehicle.errors.append(actions)
                else:
                    for action in actions.actions:
                        self._instant(vehicle, action)
            dirty.add(message.serial)
        now = self.sim.sim_time
        due = {self._serials[k] for k in np.flatnonzero(self._due <= now).tolist()}
        asked = dirty | due  # published whatever happened
        for serial in self._moving | asked:
            vehicle = self.vehicles[serial]
            before = (vehicle.book.last_node_sequence_id, serial in self._moving)
            vehicle.step()
            moving = bool(vehicle.robot.is_moving)
            if moving:
                self._moving.add(serial)
            else:
                self._moving.discard(serial)
            if (vehicle.book.last_node_sequence_id, moving) != before or serial in asked:
                self._publish_state(serial, now)
        if self.visualization_every and now >= self._next_visual:
            self._next_visual = now + self.visualization_every
            for serial, vehicle in self.vehicles.items():
                visual = vehicle.visualization(self.epoch + now)
                self.link.publish(serial, "visualization", visual.to_json())

    def _publish_state(self, serial: str, now: float) -> None:
        state = self.vehicles[serial].state(self.epoch + now)
        self.link.publish(serial, "state", state.to_json())
        self._due[self._index[serial]] = now + self.state_interval

    # -- instant actions --------------------------------------------------------------------

    def _instant(self, vehicle: Vehicle, action: Action) -> None:
        state = ActionState(action_id=action.action_id, action_type=action.action_type,
                            action_status=ActionStatus.FINISHED)  # fmt: skip
        kind = action.action_type
        if kind == "cancelOrder":
            if not vehicle.cancel():
                state.action_status = ActionStatus.FAILED
                vehicle.errors.append(
                    warning("noOrderToCancel", "there is no order", **_names(action))
                )
        elif kind == "startPause":
            vehicle.paused = True
            vehicle.robot.stop()
        elif kind == "stopPause":
            vehicle.paused = False
            vehicle.resume()
        elif kind == "stateRequest":
            pass  # the state goes out this step
        else:
            state.action_status = ActionStatus.FAILED
            state.result_description = f"unsupported instant action {kind!r}"
            why = f"{kind!r} is not one of {', '.join(INSTANT)}"
            vehicle.errors.append(warning("unsupportedActionError", why, **_names(action)))
        vehicle.actions[action.action_id] = state

    # -- connection -------------------------------------------------------------------------

    def _online(self, serial: str) -> None:
        self.link.publish(serial, "connection", self._connection(serial, ConnectionState.ONLINE))

    def _connection(self, serial: str, state: ConnectionState) -> str:
        vehicle = self.vehicles[serial]
        header = vehicle.header("connection", self.epoch + self.sim.sim_time)
        return Connection(**header, connection_state=state).to_json()


def _names(action: Action) -> dict[str, str]:
    return {"actionId": action.action_id, "actionType": action.action_type}
