"""How traffic control plans the routes it drives: a `Router` (yours, or `shortest_route`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fleetsim.site import NavGraph


class Router(Protocol):
    """Plans the route traffic control drives: node indices from `start` to `goal`, passing
    none of `avoid`; raises `RouteError` when there is none (or none within `max_expansions`
    nodes searched, when given)."""

    def __call__(
        self,
        graph: NavGraph,
        start: int,
        goal: int,
        avoid: Sequence[int],
        max_expansions: int | None,
    ) -> Sequence[int]:
        """A route from `start` to `goal` round the nodes in `avoid`."""


def shortest_route(
    graph: NavGraph, start: int, goal: int, avoid: Sequence[int], max_expansions: int | None
) -> Sequence[int]:
    """The default router: the shortest route along the lanes (A*). A detour round other
    robots (`max_expansions` given) is searched greedily: at most 1.5 times the shortest."""
    weight = 1.0 if max_expansions is None else 1.5
    return graph.route(start, goal, avoid, max_expansions, weight).nodes
