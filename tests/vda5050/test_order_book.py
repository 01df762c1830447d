"""The acceptance of orders and order updates, step by step as the standard describes it: new
orders, stitching at the decision point, repeats, stale and broken updates, cancelled orders."""

from __future__ import annotations

import itertools
import json
from typing import Any

from fleetsim.interfaces.vda5050 import Order
from fleetsim.interfaces.vda5050.messages import parse
from fleetsim.interfaces.vda5050.order_book import OrderBook

from .helpers import HEADER


def msg(
    ids: list[str], released: int, first_seq: int = 0, update: int = 0, order_id: str = "o1"
) -> Order:
    """An order through the named nodes, the first `released` of them in the base."""
    nodes = [
        {"nodeId": n, "sequenceId": first_seq + 2 * k, "released": k < released, "actions": []}
        for k, n in enumerate(ids)
    ]
    edges = [
        {
            "edgeId": f"{a}-{b}",
            "sequenceId": first_seq + 2 * k + 1,
            "released": k + 1 < released,
            "startNodeId": a,
            "endNodeId": b,
            "actions": [],
        }
        for k, (a, b) in enumerate(itertools.pairwise(ids))
    ]
    body: dict[str, Any] = {
        **HEADER,
        "orderId": order_id,
        "orderUpdateId": update,
        "nodes": nodes,
        "edges": edges,
    }
    parsed = parse(Order, json.dumps(body), "order")
    assert isinstance(parsed, Order)
    return parsed


def on(node_id: str) -> Any:
    return lambda node: node.node_id == node_id


def test_a_new_order_then_updates_stitched_at_the_decision_point() -> None:
    book = OrderBook()
    assert book.idle
    v = book.take(msg(["f", "d", "g", "b", "h"], released=3), on("f"))
    assert v.accepted and v.new and book.decision == ("g", 4)
    assert [n.node_id for n in book.node_states()] == ["d", "g", "b", "h"]  # f: standing on it
    assert [e.edge_id for e in book.edge_states()] == ["f-d", "d-g", "g-b", "b-h"]
    assert (book.last_node_id, book.last_node_sequence_id) == ("f", 0)
    book.passed(2)  # reached d
    assert [n.node_id for n in book.nodes] == ["g", "b", "h"] and book.last_node_id == "d"
    # The update: from g (the decision point), b and h now released, i on the horizon.
    v = book.take(msg(["g", "b", "h", "i"], released=3, first_seq=4, update=1), on("x"))
    assert v.accepted and not v.new and v.error is None and book.decision == ("h", 8)
    assert [(n.node_id, n.released) for n in book.nodes] == [
        ("g", True),
        ("b", True),
        ("h", True),
        ("i", False),
    ]
    assert [e.edge_id for e in book.edges] == ["d-g", "g-b", "b-h", "h-i"]
    before = (book.version, [n.node_id for n in book.nodes], book.decision)
    again = book.take(msg(["g", "b", "h", "i"], released=3, first_seq=4, update=1), on("x"))
    assert again.accepted is False and again.error is None  # the same update: ignored, no error
    assert (book.version, [n.node_id for n in book.nodes], book.decision) == before  # untouched
    for seq in (4, 6, 8):
        book.passed(seq)
    assert [n.node_id for n in book.nodes] == ["i"] and not book.idle  # waits on the horizon
    busy = book.take(msg(["h", "z"], released=2, order_id="o2"), on("h"))
    assert busy.error is not None and busy.error.error_type == "orderUpdateError"
    # An update after the base was finished continues from the decision point, h.
    assert book.take(msg(["h", "i"], released=2, first_seq=8, update=2), on("h")).accepted
    book.passed(10)
    assert book.idle and book.last_node_id == "i"
    assert book.take(msg(["i", "f"], released=2, order_id="o2"), on("i")).new


def test_rejections_carry_the_standards_error_types() -> None:
    book = OrderBook()
    far = book.take(msg(["a", "b"], released=2), on("somewhere else"))
    assert far.error is not None and far.error.error_type == "noRouteError"
    assert "starts at node 'a', which the vehicle is not on" in (far.error.error_description or "")
    bad = msg(["a", "b"], released=2)
    bad.edges[0].start_node_id = "q"
    broken = book.take(bad, on("a"))
    assert broken.error is not None and broken.error.error_type == "validationError"
    refs = {r.reference_key: r.reference_value for r in broken.error.error_references or []}
    assert refs == {"headerId": "7", "topic": "order", "orderId": "o1", "orderUpdateId": "0"}
    assert book.idle and book.order_id == ""  # nothing was taken
    book.take(msg(["a", "b", "c"], released=2, update=3), on("a"))
    stale = book.take(msg(["b", "c"], released=2, first_seq=2, update=2), on("a"))
    assert stale.error is not None and stale.error.error_type == "orderUpdateError"
    off = book.take(msg(["a", "b"], released=2, update=4), on("a"))  # not from the decision point
    assert off.error is not None and "not at the decision point 'b' (sequenceId 2)" in (
        off.error.error_description or ""
    )
    assert book.cancel() and book.idle and not book.cancel()
    late = book.take(msg(["b", "c"], released=2, first_seq=2, update=5), on("b"))
    assert late.error is not None and late.error.error_description == "the order was cancelled"
