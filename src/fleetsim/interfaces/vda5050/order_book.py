"""`OrderBook`: what one vehicle holds of its order, and whether it takes a new order or an
update, as the standard's acceptance process says (VDA 5050, "Orders and order update"):

- a message that does not parse or breaks the order rules: `validationError`, rejected;
- a new `orderId` while the vehicle is still executing an order or waiting for an update
  (nodes left, or an action neither FINISHED nor FAILED): `orderUpdateError` with the orderId
  and orderUpdateId as references, rejected (2.0's Figure 8 names it; 2.1's figure keeps that
  path and says only "throw error"); one whose
  first node the vehicle is not on (nor within its allowed deviation): `noRouteError`,
  rejected; else it replaces the old order;
- the same `orderId` with a lower `orderUpdateId`, or an update of a cancelled order:
  `orderUpdateError`, rejected; the same `orderUpdateId` again: ignored (a repeat);
- a higher `orderUpdateId` must start at the current decision point (the last base node, same
  `nodeId` and `sequenceId`): its nodes and edges after that point are appended to the base and
  its horizon replaces the old one; else `orderUpdateError`.

Nodes and edges leave the book as the vehicle passes them (`passed(sequence_id)`), which is
what `nodeStates` and `edgeStates` report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fleetsim.interfaces.vda5050.messages import (
    Edge,
    EdgeState,
    Error,
    Node,
    NodeState,
    Order,
    order_references,
    warning,
)
from fleetsim.interfaces.vda5050.order_rules import order_problems


@dataclass
class Verdict:
    """What became of an order message: accepted (new or update), ignored, or an error."""

    accepted: bool
    new: bool = False
    error: Error | None = None


@dataclass
class OrderBook:
    """A vehicle's order: the nodes and edges not yet passed, the ids, what is released, and the
    rules for taking updates."""

    order_id: str = ""
    order_update_id: int = 0
    zone_set_id: str | None = None
    nodes: list[Node] = field(default_factory=list)  # not yet passed, base then horizon
    edges: list[Edge] = field(default_factory=list)
    last_node_id: str = ""
    last_node_sequence_id: int = 0
    cancelled: str | None = None  # the orderId cancelled last
    decision: tuple[str, int] | None = None  # the last base node: (nodeId, sequenceId)
    version: int = 0  # counts changes to nodes and edges (for caches of their JSON)

    @property
    def base(self) -> list[Node]:
        """The released nodes not yet passed."""
        return [n for n in self.nodes if n.released]

    @property
    def horizon(self) -> list[Node]:
        """The nodes not released yet."""
        return [n for n in self.nodes if not n.released]

    @property
    def idle(self) -> bool:
        """No node left to drive to, nor a horizon to wait on."""
        return not self.nodes

    def take(
        self, order: Order, at_start: Callable[[Node], bool], executing: bool = False
    ) -> Verdict:
        """Take `order` or say why not; `at_start(node)` tells whether the vehicle stands on
        (or within the deviation of) a node; `executing`: an action of the vehicle's is neither
        FINISHED nor FAILED."""
        problems = order_problems(order)
        if problems:
            return self._reject(order, "validationError", "; ".join(problems))
        if order.order_id != self.order_id:
            if not self.idle or executing:
                what = "on" if not self.idle else "running actions of"
                why = f"still {what} order {self.order_id!r} (update {self.order_update_id})"
                return self._reject(order, "orderUpdateError", why + "; cancel it first")
            first = order.nodes[0]
            if not at_start(first):
                return self._reject(
                    order,
                    "noRouteError",
                    f"the order starts at node {first.node_id!r}, which the vehicle is not on",
                )
            self._replace(order)
            return Verdict(accepted=True, new=True)
        if order.order_id == self.cancelled:
            return self._reject(order, "orderUpdateError", "the order was cancelled")
        if order.order_update_id < self.order_update_id:
            why = f"orderUpdateId {order.order_update_id} is older than {self.order_update_id}"
            return self._reject(order, "orderUpdateError", why)
        if order.order_update_id == self.order_update_id:
            return Verdict(accepted=False)  # a repeat: ignored
        first = order.nodes[0]
        if self.decision != (first.node_id, first.sequence_id):
            at = f"{self.decision[0]!r} (sequenceId {self.decision[1]})" if self.decision else "-"
            return self._reject(
                order,
                "orderUpdateError",
                f"the update starts at "
                f"{first.node_id!r} (sequenceId {first.sequence_id}), not at "
                f"the decision point {at}",
            )
        self._stitch(order)
        return Verdict(accepted=True)

    def passed(self, sequence_id: int) -> None:
        """The vehicle reached the node with `sequence_id`: it and the edge before leave."""
        node = next((n for n in self.nodes if n.sequence_id == sequence_id), None)
        if node is None:
            return
        self.version += 1
        self.nodes = [n for n in self.nodes if n.sequence_id > sequence_id]
        self.edges = [e for e in self.edges if e.sequence_id > sequence_id]
        self.last_node_id, self.last_node_sequence_id = node.node_id, node.sequence_id

    def cancel(self) -> bool:
        """Drop what is left of the order (cancelOrder); False if there was none."""
        if self.idle:
            return False
        self.cancelled = self.order_id
        self.nodes, self.edges, self.decision = [], [], None
        self.version += 1
        return True

    def node_states(self) -> list[NodeState]:
        """The state's nodeStates: every node not yet passed."""
        return [
            NodeState(
                node_id=n.node_id,
                sequence_id=n.sequence_id,
                released=n.released,
                node_description=n.node_description,
                node_position=n.node_position,
            )
            for n in self.nodes
        ]

    def edge_states(self) -> list[EdgeState]:
        """The state's edgeStates: every edge not yet passed."""
        return [
            EdgeState(
                edge_id=e.edge_id,
                sequence_id=e.sequence_id,
                released=e.released,
                edge_description=e.edge_description,
                trajectory=e.trajectory,
            )
            for e in self.edges
        ]

    # -- helpers ----------------------------------------------------------------------------

    def _replace(self, order: Order) -> None:
        self.order_id, self.order_update_id = order.order_id, order.order_update_id
        self.zone_set_id, self.cancelled = order.zone_set_id, None
        first = order.nodes[0]  # the vehicle is on it: passed at once, never reported
        self.last_node_id, self.last_node_sequence_id = first.node_id, first.sequence_id
        self.nodes = list(order.nodes[1:])
        self.edges = list(order.edges)
        self._decide(order)

    def _stitch(self, order: Order) -> None:
        self.order_update_id, self.zone_set_id = order.order_update_id, order.zone_set_id
        stitch = order.nodes[0].sequence_id
        base = [n for n in self.nodes if n.released and n.sequence_id <= stitch]
        kept = [e for e in self.edges if e.released and e.sequence_id < stitch]
        self.nodes = base + [n for n in order.nodes if n.sequence_id > stitch]
        self.edges = kept + [e for e in order.edges if e.sequence_id > stitch]
        self._decide(order)

    def _decide(self, order: Order) -> None:
        self.version += 1  # called by every change of order (_replace, _stitch)
        last = [n for n in order.nodes if n.released][-1]
        self.decision = (last.node_id, last.sequence_id)

    def _reject(self, order: Order, kind: str, description: str) -> Verdict:
        return Verdict(accepted=False, error=warning(kind, description, **order_references(order)))
