"""The rules an order's nodes and edges must keep between them (VDA 5050, "order" topic), checked
after the message itself parsed: one edge fewer than nodes, sequence ids continuous and shared
(node, edge, node, ...), each edge joining the nodes either side of it, the first node released,
nothing released after something that is not (the base, then the horizon), an edge released only
with both its nodes, and action ids unique. Each broken rule is a sentence for a
`validationError`."""

from __future__ import annotations

from collections import Counter

from fleetsim.interfaces.vda5050 import nurbs
from fleetsim.interfaces.vda5050.messages import Order


def order_problems(order: Order) -> list[str]:
    """What is wrong with the order's structure (empty when it is valid)."""
    nodes, edges = order.nodes, order.edges
    problems = []
    if len(edges) != len(nodes) - 1:
        problems.append(f"{len(nodes)} nodes need {len(nodes) - 1} edges, got {len(edges)}")
    first = nodes[0].sequence_id
    for k, node in enumerate(nodes):
        if node.sequence_id != first + 2 * k:
            problems.append(
                f"nodes[{k}] ({node.node_id}): sequenceId {node.sequence_id}, expected "
                f"{first + 2 * k} (nodes and edges share one continuous sequence)"
            )
    for k, edge in enumerate(edges):
        if edge.sequence_id != first + 2 * k + 1:
            problems.append(
                f"edges[{k}] ({edge.edge_id}): sequenceId {edge.sequence_id}, expected "
                f"{first + 2 * k + 1}"
            )
        if k + 1 < len(nodes) and (
            edge.start_node_id != nodes[k].node_id or edge.end_node_id != nodes[k + 1].node_id
        ):
            problems.append(
                f"edges[{k}] ({edge.edge_id}) joins {edge.start_node_id} -> "
                f"{edge.end_node_id}, but the nodes either side are {nodes[k].node_id} and "
                f"{nodes[k + 1].node_id}"
            )
        if edge.trajectory is not None and (bad := nurbs.problem(edge.trajectory)):
            problems.append(f"edges[{k}] ({edge.edge_id}) trajectory: {bad}")
        if (
            edge.released
            and k + 1 < len(nodes)
            and not (nodes[k].released and nodes[k + 1].released)
        ):
            problems.append(f"edges[{k}] ({edge.edge_id}) is released but a node it joins is not")
    if not nodes[0].released:
        problems.append(f"nodes[0] ({nodes[0].node_id}) must be released")
    sequence = sorted(
        [(n.sequence_id, f"nodes[{k}] ({n.node_id})", n.released) for k, n in enumerate(nodes)]
        + [(e.sequence_id, f"edges[{k}] ({e.edge_id})", e.released) for k, e in enumerate(edges)]
    )
    horizon = None
    for _, where, released in sequence:
        if not released and horizon is None:
            horizon = where
        elif released and horizon is not None:
            problems.append(
                f"{where} is released after {horizon}, which is not (the base "
                "cannot continue after the horizon starts)"
            )
            break
    actions = [a for n in nodes for a in n.actions] + [a for e in edges for a in e.actions]
    ids = Counter(a.action_id for a in actions)
    problems += [f"actionId {a!r} is used {n} times" for a, n in ids.items() if n > 1]
    return problems
