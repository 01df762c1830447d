"""VDA 5050 messages: orders parse from the standard's JSON, bad input becomes the
validationError a vehicle reports (never an exception), states serialise in camelCase, and the
rules between an order's nodes and edges are checked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fleetsim.interfaces.vda5050 import (
    Error,
    InstantActions,
    Order,
    State,
    order_problems,
    timestamp,
)
from fleetsim.interfaces.vda5050.messages import parse

from .helpers import HEADER


def order(nodes: int = 3, released: int = 2, **changes: Any) -> dict[str, Any]:
    """An order through nodes n0, n1, ... with the first `released` of them in the base."""
    body: dict[str, Any] = {
        **HEADER,
        "orderId": "o1",
        "orderUpdateId": 0,
        "nodes": [
            {
                "nodeId": f"n{k}",
                "sequenceId": 2 * k,
                "released": k < released,
                "actions": [],
                "nodePosition": {
                    "x": 3.0 * k,
                    "y": 0.0,
                    "mapId": "site",
                    "theta": 0.0,
                    "allowedDeviationXY": 0.1,
                },
            }
            for k in range(nodes)
        ],
        "edges": [
            {
                "edgeId": f"e{k}",
                "sequenceId": 2 * k + 1,
                "released": k + 1 < released,
                "startNodeId": f"n{k}",
                "endNodeId": f"n{k + 1}",
                "maxSpeed": 1.0,
                "actions": [],
            }
            for k in range(nodes - 1)
        ],
    }
    body.update(changes)
    return body


def test_an_order_parses_with_the_standards_names() -> None:
    body = order()
    pick = {
        "actionType": "pick",
        "actionId": "a1",
        "blockingType": "HARD",
        "actionParameters": [{"key": "loadId", "value": "crate7"}],
    }
    body["nodes"][1]["actions"] = [pick]
    body["futureField"] = {"from": "a newer version"}  # ignored, as the standard allows
    parsed = parse(Order, json.dumps(body).encode(), "uagv/v2/fleetsim/amr_0/order")
    assert isinstance(parsed, Order)
    assert parsed.serial_number == "amr_0" and parsed.order_update_id == 0
    n1 = parsed.nodes[1]
    assert n1.node_position is not None and n1.node_position.allowed_deviation_xy == 0.1
    assert n1.actions[0].parameter("loadId") == "crate7" and n1.actions[0].blocking_type == "HARD"
    assert parsed.edges[0].max_speed == 1.0 and order_problems(parsed) == []
    again = json.loads(parsed.to_json())  # round trip: camelCase, no nulls
    assert again["nodes"][0]["nodePosition"]["allowedDeviationXY"] == 0.1
    assert "nodeDescription" not in again["nodes"][0] and again["orderId"] == "o1"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "expected a JSON object, got list"),
        (json.dumps(order(nodes=1) | {"orderId": None}).encode(), "orderId: Input should be"),
        (json.dumps(order(nodes=0)).encode(), "nodes: List should have at least 1 item"),
        (json.dumps(order() | {"timestamp": "yesterday"}).encode(), "is not ISO 8601"),
        (json.dumps(order() | {"orderUpdateId": -1}).encode(), "orderUpdateId: Input should be"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_malformed_input_becomes_a_validation_error(payload: bytes, message: str) -> None:
    error = parse(Order, payload, "uagv/v2/fleetsim/amr_0/order")
    assert isinstance(error, Error) and error.error_type == "validationError"
    assert message in (error.error_description or "")
    refs = {r.reference_key: r.reference_value for r in error.error_references or []}
    assert refs["topic"] == "uagv/v2/fleetsim/amr_0/order"
    if payload.startswith(b'{"'):
        assert refs["headerId"] == "7"


def test_bad_blocking_type_in_instant_actions() -> None:
    body = {
        **HEADER,
        "actions": [{"actionType": "cancelOrder", "actionId": "x", "blockingType": "MAYBE"}],
    }
    error = parse(InstantActions, json.dumps(body), "t")
    assert isinstance(error, Error) and "actions.0.blockingType" in (error.error_description or "")
    body["actions"][0]["blockingType"] = "NONE"
    assert isinstance(parse(InstantActions, json.dumps(body), "t"), InstantActions)


def structure(**edits: Any) -> list[str]:
    body = order(nodes=4, released=2)
    for path, value in edits.items():
        kind, k, field = path.split("__")
        body[kind][int(k)][field] = value
    parsed = parse(Order, json.dumps(body), "t")
    assert isinstance(parsed, Order)
    return order_problems(parsed)


def test_the_rules_between_nodes_and_edges() -> None:
    assert structure() == []
    assert structure(nodes__2__sequenceId=5) == [
        "nodes[2] (n2): sequenceId 5, expected 4 (nodes and edges share one continuous sequence)"
    ]
    assert structure(edges__1__startNodeId="n0") == [
        "edges[1] (e1) joins n0 -> n2, but the nodes either side are n1 and n2"
    ]
    assert "nodes[0] (n0) must be released" in structure(nodes__0__released=False)
    assert "nodes[3] (n3) is released after edges[1] (e1)" in structure(nodes__3__released=True)[0]
    assert structure(edges__1__released=True) == [
        "edges[1] (e1) is released but a node it joins is not"
    ]
    short = order(nodes=3)
    short["edges"].pop()
    parsed = parse(Order, json.dumps(short), "t")
    assert isinstance(parsed, Order) and order_problems(parsed) == ["3 nodes need 2 edges, got 1"]
    twice = order(nodes=2, released=2)
    action = {"actionType": "wait", "actionId": "a", "blockingType": "NONE"}
    twice["nodes"][0]["actions"] = [action]
    twice["edges"][0]["actions"] = [action]
    parsed = parse(Order, json.dumps(twice), "t")
    assert isinstance(parsed, Order) and order_problems(parsed) == ["actionId 'a' is used 2 times"]
    # An update starts at the stitching node's sequenceId, not 0.
    update = order(nodes=2, released=2)
    for k, item in enumerate(update["nodes"]):
        item["sequenceId"] = 6 + 2 * k
    update["edges"][0]["sequenceId"] = 7
    parsed = parse(Order, json.dumps(update), "t")
    assert isinstance(parsed, Order) and order_problems(parsed) == []


def test_a_state_serialises_as_the_standard_names_it() -> None:
    state = State(
        header_id=1,
        timestamp=timestamp(0.25),
        version="2.0.0",
        manufacturer="fleetsim",
        serial_number="amr_0",
        order_id="",
        order_update_id=0,
        last_node_id="",
        last_node_sequence_id=0,
        driving=False,
        node_states=[],
        edge_states=[],
        action_states=[],
        battery_state={"batteryCharge": 80.0, "charging": False},
        errors=[],
    )
    out = json.loads(state.to_json())
    assert out["timestamp"] == "1970-01-01T00:00:00.250Z"
    assert out["batteryState"] == {"batteryCharge": 80.0, "charging": False}
    assert out["safetyState"] == {"eStop": "NONE", "fieldViolation": False}
    assert out["operatingMode"] == "AUTOMATIC" and out["serialNumber"] == "amr_0"
    assert isinstance(parse(State, state.to_json(), "t"), State)  # what we publish, we parse
