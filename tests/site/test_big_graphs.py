"""Big site graphs are cheap: compact arrays, routes that search few nodes on grids, and
nearest-node, conflict and reachability queries that agree with measuring everything."""

from __future__ import annotations

import itertools
import math
import pickle
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim.fleet.conflicts import conflict_sets, distinct_neighbours
from fleetsim.memory import BYTES_PER_GRID_CELL
from fleetsim.site import NavGraph, RouteError, load_movingai
from fleetsim.site.nearest import SMALL_GRAPH


def lattice(side: int, spacing: float = 1.0) -> NavGraph:
    """A side x side grid of nodes with two-way lanes to the right and up."""
    k = np.arange(side * side).reshape(side, side)
    right = np.column_stack((k[:, :-1].ravel(), k[:, 1:].ravel()))
    up = np.column_stack((k[:-1, :].ravel(), k[1:, :].ravel()))
    lanes = np.vstack((right, up))
    xy = np.column_stack((k.ravel() % side, k.ravel() // side)) * spacing
    return NavGraph(
        [f"n{i}" for i in range(side * side)],
        xy,
        lanes[:, 0],
        lanes[:, 1],
        bidirectional=np.ones(len(lanes), dtype=bool),
    )


def free_map(path: Path, side: int) -> Path:
    path.write_text(f"type octile\nheight {side}\nwidth {side}\nmap\n" + ("." * side + "\n") * side)
    return path


def test_a_grid_maps_graph_takes_what_the_estimate_says(tmp_path: Path) -> None:
    """The refusal estimate (bytes a free cell) must cover the real peak while loading, and
    the graph held after is compact (4-byte indices, no per-lane columns that say nothing)."""
    path = free_map(tmp_path / "free.map", 600)
    tracemalloc.start()
    try:
        graph = load_movingai(path).graph
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    cells = 600 * 600
    assert peak <= BYTES_PER_GRID_CELL * cells, f"{peak / cells:.0f} bytes a cell at the peak"
    assert held <= 110 * cells, f"{held / cells:.0f} bytes a cell held"
    assert graph.edge_to.dtype == np.int32 and graph.lane_from.dtype == np.int32
    assert graph.speed_limit.strides == (0,) and graph.yaw.strides == (0,)  # broadcasts
    assert graph.axis_aligned


def test_a_route_across_an_open_grid_searches_a_line_not_the_square(tmp_path: Path) -> None:
    """All lanes run along x or y, so the search estimates with the Manhattan distance: corner
    to corner of a 300 x 300 open grid visits about the route's 600 nodes, not 90,000."""
    graph = load_movingai(free_map(tmp_path / "open.map", 300)).graph
    route = graph.route("r0_c0", "r299_c299", max_expansions=1_000)
    assert route.length == pytest.approx(598.0)
    turned = NavGraph(["a", "b", "c"], [[0, 0], [1, 1], [2, 0]], [0, 1], [1, 2])
    assert not turned.axis_aligned  # a diagonal lane: the straight line is the estimate


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(2, 6), st.data())
def test_routes_on_axis_aligned_graphs_are_shortest(w: int, h: int, data: st.DataObject) -> None:
    """Lattices with lanes missing, one-way lanes and uneven spacing: every route is as long
    as Bellman-Ford says (the Manhattan estimate never overestimates)."""
    xs = np.cumsum(data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.5]), min_size=w, max_size=w)))
    ys = np.cumsum(data.draw(st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=h, max_size=h)))
    xy = np.array([(x, y) for y in ys for x in xs])
    pairs = [(r * w + c, r * w + c + 1) for r in range(h) for c in range(w - 1)]
    pairs += [(r * w + c, (r + 1) * w + c) for r in range(h - 1) for c in range(w)]
    kept = data.draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    kind = data.draw(
        st.lists(st.sampled_from(["both", "ahead", "back"]), min_size=len(kept), max_size=len(kept))
    )
    lanes = [(v, u) if k == "back" else (u, v) for (u, v), k in zip(kept, kind, strict=True)]
    both = [k == "both" for k in kind]
    graph = NavGraph(
        [f"n{i}" for i in range(w * h)],
        xy,
        [u for u, _ in lanes],
        [v for _, v in lanes],
        bidirectional=both,
    )
    assert graph.axis_aligned
    edges = []
    for (u, v), two_way in zip(lanes, both, strict=True):
        length = float(np.hypot(*(xy[v] - xy[u])))
        edges += [(u, v, length)] + ([(v, u, length)] if two_way else [])
    for start in range(w * h):
        dist = [math.inf] * (w * h)
        dist[start] = 0.0
        for _ in range(w * h):
            for u, v, length in edges:
                dist[v] = min(dist[v], dist[u] + length)
        for goal in range(w * h):
            if math.isinf(dist[goal]):
                with pytest.raises(RouteError):
                    graph.route(start, goal)
            else:
                assert graph.route(start, goal).length == pytest.approx(dist[goal])


def measured(xy: np.ndarray, points: np.ndarray, allowed: np.ndarray) -> list[int]:
    """The nearest allowed node by measuring all of them, lowest index on ties."""
    out = []
    for p in points:
        d = np.hypot(xy[:, 0] - p[0], xy[:, 1] - p[1])
        d[~allowed] = np.inf
        out.append(int(np.argmin(d)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_nearest_nodes_of_a_big_graph_equal_measuring_every_node(seed: int) -> None:
    rng = np.random.default_rng(seed)
    side = 75  # 5,625 nodes: above SMALL_GRAPH, so the cells of nodes answer
    assert side * side > SMALL_GRAPH
    graph = lattice(side, spacing=rng.choice([0.5, 1.0, 2.5]))
    xy = graph.xy
    # midpoints between nodes (ties), points off the site, random points
    ties = np.column_stack((rng.integers(0, side, 300), rng.integers(0, side, 300))) + 0.5
    points = np.vstack((ties * xy[1, 0], rng.uniform(-40, xy.max() + 40, (300, 2))))
    nodes, dist = graph.nearest_nodes(points)
    assert nodes.tolist() == measured(xy, points, np.ones(len(xy), dtype=bool))
    assert dist == pytest.approx(np.hypot(*(xy[nodes] - points).T))
    assert graph.nearest_node(*points[7]) == nodes[7]
    scattered = rng.uniform(0, 300, (5_000, 2))
    scattered[:2500, 1] = 0.0  # half of them on a line
    levels = rng.choice(["L1", "L2"], 5_000, p=[0.9, 0.1]).tolist()
    other = NavGraph([f"n{i}" for i in range(5_000)], scattered, [], [], level=levels)
    nodes, _ = other.nearest_nodes(points, level="L2")
    assert nodes.tolist() == measured(scattered, points, np.array(levels) == "L2")


def conflicts_by_measuring(xy: np.ndarray, radius: float, extra: dict[int, set[int]]) -> list:
    """Each node's conflict list as the traffic control reads it: the nodes nearer than
    `radius` (and itself) in the order of their radius-sized cells, then of node index; with
    `extra` joined, sorted."""
    cell = np.floor(xy / radius).astype(int)
    out = []
    for k in range(len(xy)):
        d = np.hypot(*(xy - xy[k]).T)
        near = sorted(
            np.flatnonzero((d < radius) | (np.arange(len(xy)) == k)).tolist(),
            key=lambda m: (cell[m, 0], cell[m, 1], m),
        )
        out.append(sorted(set(near) | extra[k]) if k in extra else near)
    return out


@pytest.mark.parametrize(("seed", "block"), [(0, 7), (1, 64), (2, 1 << 16), (3, 100)])
def test_conflict_sets_equal_measuring_every_pair(seed: int, block: int) -> None:
    rng = np.random.default_rng(seed)
    n = 600
    xy = [
        rng.uniform(0, 30, (n, 2)),  # dense
        np.column_stack((rng.integers(0, 25, n), rng.integers(0, 25, n))) * 1.0,  # ties
        rng.uniform(0, 1e5, (n, 2)),
    ][seed % 3]  # sparse: found by binary search
    radius = float(rng.choice([0.92, 1.0, 2.5]))
    extra = {int(k): set(rng.integers(0, n, 3).tolist()) for k in rng.integers(0, n, 6)}
    c = conflict_sets(xy, radius, extra, block=block)
    got = [c.indices[c.indptr[k] : c.indptr[k + 1]].tolist() for k in range(n)]
    assert got == conflicts_by_measuring(xy, radius, extra)


def test_degrees_and_reachability_equal_walking_the_lanes() -> None:
    rng = np.random.default_rng(9)
    n, m = 3_000, 7_000  # wide frontiers (whole arrays) and narrow ones (node by node)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    graph = NavGraph(
        [f"n{i}" for i in range(n)],
        rng.uniform(0, 100, (n, 2)),
        a[keep],
        b[keep],
        bidirectional=rng.random(int(keep.sum())) < 0.3,
    )
    pairs = {
        (min(u, v), max(u, v)) for u, v in zip(a[keep].tolist(), b[keep].tolist(), strict=True)
    }
    degree = np.zeros(n, dtype=int)
    for u, v in pairs:
        degree[u] += 1
        degree[v] += 1
    assert distinct_neighbours(graph, block=1000).tolist() == degree.tolist()
    successors: dict[int, set[int]] = {}
    for u, v, two_way in zip(
        graph.lane_from.tolist(), graph.lane_to.tolist(), graph.bidirectional.tolist(), strict=True
    ):
        successors.setdefault(u, set()).add(v)
        if two_way:
            successors.setdefault(v, set()).add(u)
    for sources in ([0], [5, 17, 300], list(range(0, n, 40))):
        seen, todo = set(sources), list(sources)
        while todo:
            for v in successors.get(todo.pop(), ()):
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        assert np.flatnonzero(graph.reachable(sources)).tolist() == sorted(seen)
    line = np.column_stack((np.arange(500), np.zeros(500)))
    chain = NavGraph([f"c{i}" for i in range(500)], line, np.arange(499), np.arange(1, 500))
    assert chain.reachable([0]).all() and chain.reachable([499]).sum() == 1
    assert sorted(chain.successors(3)) == [4] and chain.successors(499) == []


def test_a_graph_pickles_and_routes_the_same_after() -> None:
    graph = lattice(12)
    again = pickle.loads(pickle.dumps(graph))
    for a, b in itertools.combinations([0, 5, 77, 143], 2):
        assert again.route(a, b).nodes == graph.route(a, b).nodes
    assert again.nearest_node(3.2, 4.9) == graph.nearest_node(3.2, 4.9)


@pytest.mark.parametrize("weight", [1.0, 1.5])
def test_the_compiled_search_finds_the_python_searchs_routes(
    weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Numba the route search runs compiled: the same routes node for node (ties and
    all) as the Python search, round avoided nodes, within expansion limits (and none where
    it finds none), on the warehouse layout (its stations' lanes are diagonal: the straight
    line estimates) and on a grid (Manhattan)."""
    pytest.importorskip("numba")
    from fleetsim import jit
    from fleetsim.site import search_kernel
    from fleetsim.site.layouts import warehouse_layout

    monkeypatch.setattr(jit, "_eager", [True])  # (small graphs too)
    warehouse = warehouse_layout(aisles=12, blocks=3, stations=8, parking_rows=3).graph
    grid = lattice(20)
    assert grid.axis_aligned and not warehouse.axis_aligned
    rng = np.random.default_rng(3)

    def routes() -> list[object]:
        return routes_on(warehouse) + routes_on(grid)

    def routes_on(graph: NavGraph) -> list[object]:
        n = len(graph.names)
        out: list[object] = []
        for _ in range(100):
            s, g = (int(x) for x in rng.integers(0, n, 2))
            avoid = rng.choice(n, int(rng.integers(0, 60)), replace=False).tolist()
            limit = None if rng.random() < 0.7 else int(rng.integers(5, 200))
            try:
                out.append(graph.route(s, g, avoid, limit, weight).nodes)
            except RouteError as exc:
                out.append(str(exc))
        return out

    ran: list[bool] = []
    search = search_kernel.search
    monkeypatch.setattr(
        search_kernel, "search", lambda *a: (lambda r: ran.append(r[0]) or r)(search(*a))
    )
    compiled = routes()
    assert ran and all(ran)
    rng = np.random.default_rng(3)
    monkeypatch.setattr(search_kernel, "search", lambda *a: (False, None))
    python = routes()
    assert compiled == python
    assert (
        sum(isinstance(r, str) for r in python) > 5
        and sum(isinstance(r, tuple) for r in python) > 50
    )
