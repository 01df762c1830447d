"""`NavGraph`: named nodes and lanes as arrays, routing that respects lane directions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim.errors import ConfigError
from fleetsim.site import NavGraph, RouteError

from .maps import LANES, NODES


@pytest.fixture
def graph() -> NavGraph:
    return NavGraph.from_lists(NODES, LANES)


def test_routes_follow_lane_directions(graph: NavGraph) -> None:
    there = graph.route("dock", "c")  # the c-dock lane is two-way: straight there
    assert [graph.names[k] for k in there.nodes] == ["dock", "c"]
    assert there.length == pytest.approx(5.0)
    back = graph.route("c", "b")  # b -> c is one way: c reaches b round the other side
    assert [graph.names[k] for k in back.nodes] == ["c", "dock", "a", "b"]
    assert back.length == pytest.approx(15.0)
    assert back.speed_limits.tolist() == [math.inf, 0.5, math.inf]
    assert graph.route("b", "b").length == 0.0
    reached = graph.reachable([graph.node("dock")])
    assert [graph.names[k] for k in np.flatnonzero(reached)] == ["dock", "a", "b", "c"]
    assert graph.reachable([graph.node("island")]).sum() == 1


def test_queries_and_properties(graph: NavGraph) -> None:
    assert graph.nodes_with("charger") == ["dock"] and graph.nodes_with("pickup") == ["b"]
    assert graph.nearest_node(4.2, 0.9) == graph.node("a")
    lanes, dist = graph.lane_at(np.array([[2.5, 0.1], [5.2, 2.0]]))
    assert lanes.tolist() == [0, 1] and dist == pytest.approx([0.1, 0.2])
    assert graph.mutex.tolist() == [-1, -1, -1, 0]
    assert np.isnan(graph.yaw[0]) and graph.yaw[3] == pytest.approx(1.57)


def test_bad_graphs_and_routes_are_clear_errors(graph: NavGraph) -> None:
    with pytest.raises(RouteError, match="no route from 'dock' to 'island'"):
        graph.route("dock", "island")
    with pytest.raises(ConfigError, match="unknown node 'dok': did you mean 'dock'"):
        graph.route("dok", "a")
    with pytest.raises(ConfigError, match=r"lanes\[1\]\.to: unknown node 'bb'"):
        NavGraph.from_lists(NODES, [{"from": "a", "to": "b"}, {"from": "a", "to": "bb"}])
    with pytest.raises(ConfigError, match="duplicate node name 'a'"):
        NavGraph.from_lists([*NODES, {"name": "a", "x": 1, "y": 1}], [])
    with pytest.raises(ConfigError, match="two different nodes"):
        NavGraph.from_lists(NODES, [{"from": "a", "to": "a"}])
    with pytest.raises(ConfigError, match="unknown node property 'chargr'"):
        NavGraph(["n"], np.zeros((1, 2)), np.empty(0), np.empty(0), properties={"chargr": [1]})


def dijkstra_brute(n: int, edges: list[tuple[int, int, float]], s: int) -> list[float]:
    dist = [math.inf] * n
    dist[s] = 0.0
    for _ in range(n):  # Bellman-Ford: simple and obviously right
        for u, v, w in edges:
            dist[v] = min(dist[v], dist[u] + w)
    return dist


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.data())
def test_route_lengths_equal_a_brute_force_on_random_graphs(n: int, data: st.DataObject) -> None:
    points = st.tuples(st.integers(-20, 20), st.integers(-20, 20))
    xy = np.array(data.draw(st.lists(points, min_size=n, max_size=n, unique=True)), dtype=float)
    pairs = list(itertools.permutations(range(n), 2))
    chosen = data.draw(st.lists(st.sampled_from(pairs), max_size=3 * n, unique=True))
    both = data.draw(st.lists(st.booleans(), min_size=len(chosen), max_size=len(chosen)))
    graph = NavGraph(
        [f"n{k}" for k in range(n)],
        xy,
        np.array([u for u, _ in chosen], dtype=np.int64),
        np.array([v for _, v in chosen], dtype=np.int64),
        bidirectional=np.array(both, dtype=bool),
    )
    edges = []
    for (u, v), two_way in zip(chosen, both, strict=True):
        w = float(np.hypot(*(xy[v] - xy[u])))
        edges.append((u, v, w))
        if two_way:
            edges.append((v, u, w))
    expected = dijkstra_brute(n, edges, 0)
    for goal in range(n):
        if math.isinf(expected[goal]):
            with pytest.raises(RouteError):
                graph.route(0, goal)
        else:
            route = graph.route(0, goal)
            assert route.length == pytest.approx(expected[goal])
            assert route.nodes[0] == 0 and route.nodes[-1] == goal
