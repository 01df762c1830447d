"""`Vehicle`: one simulated robot as a VDA 5050 vehicle. It takes orders (through its
`OrderBook`), drives the released base through the nodes' positions (from the order, else the
site node of the same id) with the edges' `maxSpeed`, stops at the decision point and at nodes
whose actions block driving, runs node, edge and instant actions (`ActionQueue`, with what they
do in `VehicleEffects`), lets nodes and edges go as it passes them, and builds its `state`
message from the simulation.

No network here: `take_order` gets a parsed message, `state()` returns one; the fleet side
moves bytes.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from fleetsim.agents import Agent
from fleetsim.devices import Lifts
from fleetsim.errors import ConfigError, is_finite_number
from fleetsim.geometry import Pose
from fleetsim.interfaces.vda5050 import encode, route
from fleetsim.interfaces.vda5050.actions import OPEN, ActionQueue
from fleetsim.interfaces.vda5050.effects import VehicleEffects, unsupported
from fleetsim.interfaces.vda5050.encode import Motion
from fleetsim.interfaces.vda5050.floors import Floors
from fleetsim.interfaces.vda5050.messages import (
    Action,
    ActionState,
    BlockingType,
    Edge,
    Error,
    ErrorLevel,
    Node,
    Order,
    State,
    Visualization,
    order_references,
    timestamp,
    warning,
)
from fleetsim.interfaces.vda5050.order_book import OrderBook
from fleetsim.interfaces.vda5050.state_out import StateOut
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.site import Site

PASS_RADIUS_M = 0.25  # a node counts as passed this close, or within its allowedDeviationXY
NEW_BASE_S = 3.0  # newBaseRequest this many seconds (at the current speed) before the base ends
NEW_BASE_MIN_M = 1.0  # ... or this close to its end
MAX_ERRORS = 50  # the newest warnings kept (a flood of bad messages cannot grow the state)


class Vehicle:
    """One robot as a VDA 5050 vehicle: its orders, actions, errors and messages."""

    def __init__(
        self,
        robot: Agent,
        topics: Topics,
        site: Site | None = None,
        map_id: str = "site",
        lifts: Lifts | None = None,
    ) -> None:
        self.robot, self.topics, self.site, self._map_id = robot, topics, site, map_id
        self.floors = Floors(robot, site, self.position_of, lifts)  # levels as maps, lift rides
        self.serial = robot.name
        self.book = OrderBook()
        self.errors: list[Error] = []
        self.effects = VehicleEffects(robot, site, self.position_of)
        self.work = ActionQueue(self.effects)
        self.paused = False
        self.battery = 100.0  # percent; the fleet side sets it from the battery model
        self.reported_offset = (0.0, 0.0)  # a localisation fault: what it reports is this off
        self.headers: Counter[str] = Counter()
        self._base: list[Node] = []  # the base nodes the robot is driving through now
        self._last_xy: tuple[float, float] | None = None  # where the last node passed is
        ids = encode.ids(topics.protocol_version, topics.manufacturer, self.serial)
        self.out = StateOut(self, ids)  # the state and visualization JSON
        self._omni = robot.spawn_params.motion_mode != "differential"

    @property
    def field_violation(self) -> bool:
        """Whether an obstacle is in the robot's protective field (its safety fields stop it:
        `safetyState.fieldViolation`)."""
        return self.robot.safety_field_state == "protective"

    @property
    def map_id(self) -> str:
        """The vehicle's mapId: in a building of several levels the level it is on."""
        return self.floors.map_of(self._map_id)

    @map_id.setter
    def map_id(self, value: str) -> None:
        self._map_id = value

    @property
    def actions(self) -> dict[str, ActionState]:
        """actionId -> state of every action of the order and the instant actions."""
        return self.work.states

    def report(self, error: Error) -> None:
        """Add `error` to the state's errors (keeping the newest `MAX_ERRORS`)."""
        self.errors.append(error)
        del self.errors[:-MAX_ERRORS]

    # -- orders -----------------------------------------------------------------------------

    def take_order(self, order: Order) -> bool:
        """Accept or reject `order` (errors land in the state); True when accepted."""
        why = self._cannot(order)
        if why is not None:
            self.report(warning(why[0], why[1], **order_references(order)))
            return False
        stitch_at = self.book.last_node_sequence_id
        verdict = self.book.take(order, self._standing_on, self.executing)
        if verdict.error is not None:
            self.report(verdict.error)
            return False
        if not verdict.accepted:
            return False  # a repeat of the same update
        if verdict.new:
            self.floors.cancel()  # a lift called for the last order (not one it rides)
            self.errors = [e for e in self.errors if e.error_level is ErrorLevel.FATAL]
            self.work.forget_finished()
        self.work.expect([a for n in order.nodes for a in n.actions])
        self.work.expect([a for e in order.edges for a in e.actions])
        if verdict.new:
            first = order.nodes[0]
            place = self.position_of(first)
            self._last_xy = (place[0], place[1]) if place is not None else None
            self._reached(first)  # it stands on the first node: its actions start now
        elif stitch_at == order.nodes[0].sequence_id:  # waiting at the stitching node
            self.work.start(self._edge_actions(stitch_at + 1))
        self._base = []
        self._advance()
        return True

    def cancel(self) -> bool:
        """cancelOrder: stop where it is, drop the rest of the order, fail its actions."""
        if not self.book.cancel():
            return False
        self.robot.stop()
        self._base = []
        self.floors.cancel()
        self.work.cancel("order cancelled")
        return True

    def pause(self) -> None:
        """startPause: stop driving (within the robot's deceleration) and hold the running
        actions, until `resume()`."""
        self.paused = True
        self.robot.stop()
        self._base = []  # on resume, the way on is planned again from where it stands

    def resume(self) -> None:
        """stopPause: drive on through what is left of the base, from where it stands."""
        self.paused = False
        self._advance()

    @property
    def executing(self) -> bool:
        """Still executing an order or waiting for an update, as the standard's acceptance
        process asks (step 3): nodes left, or an action neither FINISHED nor FAILED."""
        return bool(self.book.nodes) or any(
            s.action_status in OPEN for s in self.work.states.values()
        )

    def init_position(self, action: Action) -> str | None:
        """initPosition: put the vehicle at x, y, theta and set lastNodeId; why not, else
        None. Refused while an order is being driven."""
        if not self.book.idle:
            return f"refused while driving order {self.book.order_id!r}"
        values = {k: action.parameter(k) for k in ("x", "y", "theta")}
        bad = [k for k, v in values.items() if not is_finite_number(v)]
        if bad:
            return f"parameters {', '.join(bad)} must be numbers (theta in radians)"
        self.robot.stop()
        z = self.robot.get_pose().position[2]
        self.robot.set_pose(Pose.from_yaw(values["x"], values["y"], z, values["theta"]))
        self.book.last_node_id = str(action.parameter("lastNodeId", ""))
        self.book.last_node_sequence_id = 0
        map_id = action.parameter("mapId")
        if map_id is not None:
            self.map_id = str(map_id)
        return None

    def position_of(self, node: Node) -> tuple[float, float, float | None] | None:
        """(x, y, theta or None) of a node: its nodePosition, else the site's node of that id."""
        if node.node_position is not None:
            p = node.node_position
            return p.x, p.y, p.theta
        if self.site is None:
            return None
        graph = self.site.graph
        try:
            k = graph.node(node.node_id)
        except ConfigError:
            return None
        x, y = graph.xy[k].tolist()
        yaw = float(graph.yaw[k])
        return x, y, yaw if math.isfinite(yaw) else None

    # -- the step ---------------------------------------------------------------------------

    def step(self, dt: float = 0.0) -> bool:
        """Pass the base nodes reached (starting their actions), run the actions for `dt`
        seconds, drive on when nothing blocks; True when an action's status changed."""
        self._pass_nodes()
        changed = self.work.step(dt, self.paused)
        for action, why in self.work.failures:
            self.report(
                warning(
                    "actionError", why, actionId=action.action_id, actionType=action.action_type
                )
            )
        self.work.failures.clear()
        self._advance()
        return changed

    def next_stop(self) -> tuple[float, float, float] | None:
        """(x, y, how close counts) of the next base node it is driving to, if any."""
        if not self._base:
            return None
        node = self._base[0]
        place = self.position_of(node)
        return (place[0], place[1], _reach(node)) if place is not None else None

    @property
    def active(self) -> bool:
        """Driving, running actions or with base left to drive: it needs stepping."""
        return bool(self.robot.is_moving or self.work.busy or self._base or self.book.base)

    def motion(self) -> Motion:
        """The robot's pose and velocity now (the fleet reads these from arrays in bulk)."""
        pose = self.robot.get_pose()
        (vx, vy, _), omega = self.robot.get_velocity()
        x, y = pose.position[:2]
        dx, dy = self.reported_offset
        return Motion(x + dx, y + dy, pose.yaw, vx, vy, omega, bool(self.robot.is_moving))

    def state(self, now: float) -> State:
        """The `state` message, checked against the standard's model."""
        return State.model_validate_json(self.state_json(timestamp(now), self.motion()))

    def state_json(self, stamp: str, m: Motion) -> str:
        """The next `state` message as JSON (`StateOut.state`); `stamp` from `timestamp()`."""
        return self.out.state(stamp, m)

    def visualization(self, now: float) -> Visualization:
        """Position and velocity only, for the `visualization` topic."""
        return Visualization.model_validate_json(
            self.visualization_json(timestamp(now), self.motion())
        )

    def visualization_json(self, stamp: str, m: Motion) -> str:
        """The next `visualization` message as JSON."""
        return self.out.visualization(stamp, m)

    @property
    def driving_base(self) -> bool:
        """Whether it is driving through base nodes now."""
        return bool(self._base)

    def distance_since_last_node(self, x: float, y: float) -> float | None:
        """Metres from the last node passed, while driving on through the base (else None)."""
        if self._base and self._last_xy is not None:
            return math.hypot(x - self._last_xy[0], y - self._last_xy[1])
        return None

    # -- helpers ----------------------------------------------------------------------------

    def _cannot(self, order: Order) -> tuple[str, str] | None:
        """(errorType, why) when the vehicle cannot take `order` whatever its state: a node
        it cannot place, an action it does not support there."""
        unplaced = [n.node_id for n in order.nodes if self.position_of(n) is None]
        if unplaced:
            return "noRouteError", (
                f"nodes without a nodePosition that are not on the site: {', '.join(unplaced[:5])}"
            )
        if self.floors.levels:
            why = self.floors.cannot(order, self.map_id)
            return ("noRouteError", why) if why is not None else self._cannot_do(order)
        elsewhere = [
            n.node_id
            for n in order.nodes
            if n.node_position is not None and n.node_position.map_id != self.map_id
        ]
        if elsewhere:
            return "noRouteError", (
                f"nodes on another map than the vehicle's {self.map_id!r} (initPosition sets "
                f"it): {', '.join(elsewhere[:5])}"
            )
        return self._cannot_do(order)

    def _cannot_do(self, order: Order) -> tuple[str, str] | None:
        """(errorType, why) for an edge or action the vehicle cannot do."""
        for edge in order.edges:
            why = route.orientation_problem(edge, self._omni)
            if why is not None:
                return "orderError", why
        for scope, actions in (
            ("NODE", [a for n in order.nodes for a in n.actions]),
            ("EDGE", [a for e in order.edges for a in e.actions]),
        ):
            for action in actions:
                why = unsupported(action, scope)
                if why is not None:
                    return "orderError", f"action {action.action_id!r}: {why}"
        return None

    def _pass_nodes(self) -> None:
        """Let go of the base nodes the robot has reached (and the edges before them)."""
        if not self._base:
            return
        x, y = self.robot.get_pose().position[:2]
        while self._base:
            node = self._base[0]
            px, py, _ = self.position_of(node) or (math.inf, math.inf, None)
            if math.hypot(x - px, y - py) > _reach(node):
                break
            self.book.passed(node.sequence_id)
            self._last_xy = (px, py)
            self._base.pop(0)
            self._reached(node)

    def _reached(self, node: Node) -> None:
        """Start the actions of `node` and of the edge leaving it."""
        self.work.start(list(node.actions), node)
        self.work.start(self._edge_actions(node.sequence_id + 1))

    def _edge_actions(self, sequence_id: int) -> list[Action]:
        edge = self._edge(sequence_id)
        return list(edge.actions) if edge is not None and edge.released else []

    def _edge(self, sequence_id: int) -> Edge | None:
        return next((e for e in self.book.edges if e.sequence_id == sequence_id), None)

    def _advance(self) -> None:
        """Stop while an action blocks driving or the vehicle is paused; else drive on when
        there is base left and the robot stands."""
        if self.work.blocks_driving or self.paused:
            if self.robot.is_moving:
                self.robot.stop()
                self._base = []
            return
        if not self._base and self.book.base:
            if not self.floors.ride(self.book.base, self.map_id):
                return  # in a lift: waiting to be carried to the next node's level
            self._drive()

    def _drive(self) -> None:
        """Drive through the base nodes not yet passed, at the edges' speed limits, as far as
        the first node where a blocking action will stop the vehicle."""
        self._base = []
        for node in self.book.base:
            self._base.append(node)
            edge = self._edge(node.sequence_id + 1)
            actions = list(node.actions) + (list(edge.actions) if edge is not None else [])
            if any(a.blocking_type is not BlockingType.NONE for a in actions):
                break
        cut = self.floors.gate(self._base, self.map_id)  # short of a lift not there yet
        if cut is not None:
            self._base = self._base[:cut]
        if not self._base:
            return
        pose = self.robot.get_pose()
        way = route.plan(
            self._base,
            self.book.edges,
            self.position_of,
            (pose.position[0], pose.position[1]),
            pose.yaw,
        )
        face = way.face if self._omni and any(way.face) else None
        self.robot.set_waypoints(
            way.points,
            way.yaws,
            tolerance=0.05,
            align_orientation=way.align,
            speed_limits=way.limits,
            face=face,
        )

    def wants_base(self, x: float, y: float, speed: float) -> bool:
        """newBaseRequest: a horizon waits and the end of the base is near (within
        `NEW_BASE_S` at the current speed, or `NEW_BASE_MIN_M`)."""
        if not self.book.nodes or not self.book.horizon:
            return False
        base = self.book.base
        left = 0.0
        for node in base:
            px, py, _ = self.position_of(node) or (x, y, None)
            left += math.hypot(px - x, py - y)
            x, y = px, py
        return left <= max(NEW_BASE_MIN_M, NEW_BASE_S * speed)

    def _standing_on(self, node: Node) -> bool:
        if node.node_id == self.book.last_node_id and self.book.last_node_id:
            return True
        place = self.position_of(node)
        if place is None:
            return False
        x, y = self.robot.get_pose().position[:2]
        return math.hypot(x - place[0], y - place[1]) <= _reach(node)

    def header(self, topic: str, now: float) -> dict[str, Any]:
        """The header fields of the next message on `topic` (its own headerId count)."""
        header_id = self.headers[topic]
        self.headers[topic] += 1
        return {
            "header_id": header_id,
            "timestamp": timestamp(now),
            "version": self.topics.protocol_version,
            "manufacturer": self.topics.manufacturer,
            "serial_number": self.serial,
        }


def _reach(node: Node) -> float:
    """How close counts as at a node: its allowedDeviationXY, at least PASS_RADIUS_M."""
    deviation = node.node_position.allowed_deviation_xy if node.node_position else None
    return max(PASS_RADIUS_M, deviation or 0.0)
