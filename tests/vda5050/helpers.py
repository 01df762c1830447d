"""What the VDA 5050 tests share: a message header (`HEADER`), a straight order, and
`fleetsim vda5050` running on a broker (`serving`)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fleetsim.interfaces.vda5050.messages import Order, parse

HEADER = {
    "headerId": 7,
    "timestamp": "2026-11-23T10:00:00.00Z",
    "version": "2.0.0",
    "manufacturer": "fleetsim",
    "serialNumber": "amr_0",
}


def straight(
    ids: list[str],
    released: int,
    first_seq: int = 0,
    update: int = 0,
    speeds: dict[str, float] | None = None,
    positions: bool = True,
) -> Order:
    """Nodes on the x axis 3 m apart (n0 at x = 0), the first `released` in the base."""
    nodes = []
    for k, n in enumerate(ids):
        node: dict[str, Any] = {
            "nodeId": n,
            "sequenceId": first_seq + 2 * k,
            "released": k < released,
            "actions": [],
        }
        if positions:
            node["nodePosition"] = {"x": 3.0 * int(n[1:]), "y": 0.0, "mapId": "site"}
        nodes.append(node)
    edges = [
        {
            "edgeId": f"{a}{b}",
            "sequenceId": first_seq + 2 * k + 1,
            "released": k + 1 < released,
            "startNodeId": a,
            "endNodeId": b,
            "actions": [],
            **({"maxSpeed": speeds[b]} if speeds and b in speeds else {}),
        }
        for k, (a, b) in enumerate(itertools.pairwise(ids))
    ]
    body = {**HEADER, "orderId": "o1", "orderUpdateId": update, "nodes": nodes, "edges": edges}
    order = parse(Order, json.dumps(body), "order")
    assert isinstance(order, Order)
    return order


@contextmanager
def serving(path: Path, broker_url: str, *options: str, ready: str = "") -> Iterator[Any]:
    """`fleetsim vda5050 PATH --broker URL OPTIONS...` running (once it said `ready` in its
    first line, when given), stopped after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "vda5050", str(path), "--broker", broker_url, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if ready:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert ready in line, proc.stderr.read() if proc.poll() is not None else line  # type: ignore[union-attr]
        yield proc
    finally:
        proc.terminate()
        proc.wait(20)
