"""`Vehicle`: one simulated robot as a VDA 5050 vehicle. It takes orders (through its
`OrderBook`), drives the released base through the nodes' positions (from the order, else the
site node of the same id) with the edges' `maxSpeed`, stops at the decision point, lets nodes
and edges go as it passes them, and builds its `state` message from the simulation.

No network here: `take_order` gets a parsed message, `state()` returns one; the fleet side
moves bytes.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.site import Site
from fleetsim.vda5050.messages import (
    ActionState,
    ActionStatus,
    AgvPosition,
    BatteryState,
    Error,
    Node,
    Order,
    State,
    Velocity,
    Visualization,
    order_references,
    timestamp,
    warning,
)
from fleetsim.vda5050.order_book import OrderBook
from fleetsim.vda5050.topics import Topics

PASS_RADIUS_M = 0.25  # a node counts as passed this close, or within its allowedDeviationXY
ORDER_ERRORS = ("validationError", "orderError", "orderUpdateError", "noRouteError")


class Vehicle:
    def __init__(
        self, robot: Any, topics: Topics, site: Site | None = None, map_id: str = "site"
    ) -> None:
        self.robot, self.topics, self.site, self.map_id = robot, topics, site, map_id
        self.serial = robot.name
        self.book = OrderBook()
        self.errors: list[Error] = []
        self.actions: dict[str, ActionState] = {}
        self.paused = False
        self.battery = 100.0  # percent; the fleet side sets it from the battery model
        self.headers: Counter[str] = Counter()
        self._base: list[Node] = []  # the base nodes the robot is driving through now
        self._last_xy: tuple[float, float] | None = None  # where the last node passed is

    # -- orders -----------------------------------------------------------------------------

    def take_order(self, order: Order) -> bool:
        """Accept or reject `order` (errors land in the state); True when accepted."""
        unplaced = [n.node_id for n in order.nodes if self.position_of(n) is None]
        if unplaced:
            why = (
                f"nodes without a nodePosition that are not on the site: {', '.join(unplaced[:5])}"
            )
            self.errors.append(warning("noRouteError", why, **order_references(order)))
            return False
        verdict = self.book.take(order, self._standing_on)
        if verdict.error is not None:
            self.errors.append(verdict.error)
            return False
        if not verdict.accepted:
            return False  # a repeat of the same update
        if verdict.new:
            self.errors = [e for e in self.errors if e.error_type not in ORDER_ERRORS]
            self.actions = {}
            first = self.position_of(order.nodes[0])
            self._last_xy = (first[0], first[1]) if first is not None else None
        actions = [a for n in order.nodes for a in n.actions]
        actions += [a for e in order.edges for a in e.actions]
        for a in actions:
            waiting = ActionState(action_id=a.action_id, action_type=a.action_type,
                                  action_description=a.action_description,
                                  action_status=ActionStatus.WAITING)  # fmt: skip
            self.actions.setdefault(a.action_id, waiting)
        self._drive()
        return True

    def cancel(self) -> bool:
        """cancelOrder: stop where it is and drop the rest of the order."""
        if not self.book.cancel():
            return False
        self.robot.stop()
        self._base = []
        for state in self.actions.values():
            if state.action_status in (ActionStatus.WAITING, ActionStatus.INITIALIZING):
                state.action_status = ActionStatus.FAILED
                state.result_description = "order cancelled"
        return True

    def resume(self) -> None:
        """Drive on through what is left of the base (after a pause)."""
        if self.book.base:
            self._drive()

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

    def step(self) -> None:
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

    def state(self, now: float) -> State:
        position, velocity = self._motion()
        x, y = position.x, position.y
        since = None
        if self._base and self._last_xy is not None:  # driving on from the last node
            since = math.hypot(x - self._last_xy[0], y - self._last_xy[1])
        return State(
            **self.header("state", now),
            order_id=self.book.order_id,
            order_update_id=self.book.order_update_id,
            zone_set_id=self.book.zone_set_id,
            last_node_id=self.book.last_node_id,
            last_node_sequence_id=self.book.last_node_sequence_id,
            driving=bool(self.robot.is_moving),
            paused=self.paused,
            distance_since_last_node=since,
            node_states=self.book.node_states(),
            edge_states=self.book.edge_states(),
            agv_position=position,
            velocity=velocity,
            action_states=list(self.actions.values()),
            battery_state=BatteryState(battery_charge=self.battery, charging=False),
            errors=list(self.errors),
        )

    def visualization(self, now: float) -> Visualization:
        """Position and velocity only, for the `visualization` topic."""
        position, velocity = self._motion()
        header = self.header("visualization", now)
        return Visualization(**header, agv_position=position, velocity=velocity)

    # -- helpers ----------------------------------------------------------------------------

    def _motion(self) -> tuple[AgvPosition, Velocity]:
        pose = self.robot.get_pose()
        (vx, vy, _), omega = self.robot.get_velocity()
        x, y = pose.position[:2]
        where = AgvPosition(x=x, y=y, theta=pose.yaw, map_id=self.map_id,
                            position_initialized=True)  # fmt: skip
        return where, Velocity(vx=vx, vy=vy, omega=omega)

    def _drive(self) -> None:
        """Drive through the base nodes not yet passed, at the edges' speed limits."""
        self._base = self.book.base
        if not self._base:
            return
        # the edge before a node (sequenceId one less) limits the leg to it
        speeds = {e.sequence_id + 1: e.max_speed for e in self.book.edges if e.released}
        poses, limits = [], []
        for node in self._base:
            px, py, theta = self.position_of(node) or (0.0, 0.0, None)
            yaw = theta if theta is not None else self.robot.get_pose().yaw
            poses.append(Pose.from_yaw(px, py, 0.0, yaw))
            limits.append(speeds.get(node.sequence_id) or math.inf)
        final = self._base[-1].node_position
        align = final is not None and final.theta is not None
        self.robot.set_path(poses, tolerance=0.05, align_orientation=align, speed_limits=limits)

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
        return {"header_id": header_id, "timestamp": timestamp(now),
                "version": self.topics.protocol_version,
                "manufacturer": self.topics.manufacturer, "serial_number": self.serial}  # fmt: skip


def _reach(node: Node) -> float:
    """How close counts as at a node: its allowedDeviationXY, at least PASS_RADIUS_M."""
    deviation = node.node_position.allowed_deviation_xy if node.node_position else None
    return max(PASS_RADIUS_M, deviation or 0.0)
