"""`NavGraph`: a navigation graph of named nodes and lanes, stored as arrays.

Nodes: name, x, y (m), yaw (rad, NaN when free), level, and property flags (parking spot,
charger, holding point, pickup, dropoff). Lanes: from -> to, bidirectional or not, speed limit
(m/s, inf when none), mutex group (-1 when none). Routing is A* over lane lengths on a compressed
adjacency (CSR) of directed edges, one search per request, never per step.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, closest, is_finite_number
from fleetsim.site import nearest, search_kernel

NODE_PROPERTIES = ("parking_spot", "charger", "holding_point", "pickup", "dropoff")
FloatArray = np.ndarray
IntArray = np.ndarray


class RouteError(ConfigError):
    """No route: the nodes are not connected (in the lanes' directions)."""


@dataclass(frozen=True)
class Route:
    """A route: node indices in order, their positions (N, 2), and its length in metres."""

    nodes: tuple[int, ...]
    positions: FloatArray
    length: float
    speed_limits: FloatArray  # per leg (N - 1,), m/s, inf when the lane has none


class NavGraph:
    """Nodes and lanes as arrays, with routing, nearest-node and which-lane queries.

    Build one with `NavGraph.from_lists(nodes, lanes)` or `NavGraph.from_dict(...)` (the
    scenario's inline `site: {graph: ...}`); importers (grid maps, Open-RMF buildings) use the
    array constructor directly.
    """

    def __init__(
        self,
        names: Sequence[str],
        xy: FloatArray,
        lane_from: IntArray,
        lane_to: IntArray,
        *,
        yaw: FloatArray | None = None,
        level: Sequence[str] | None = None,
        properties: Mapping[str, FloatArray] | None = None,
        bidirectional: FloatArray | None = None,
        speed_limit: FloatArray | None = None,
        mutex: IntArray | None = None,
        lane_cost: FloatArray | None = None,
    ) -> None:
        n, m = len(names), len(lane_from)
        # A list of names, or a lazy sequence with a `lookup(name)` (a grid map's cells).
        self.names: Sequence[str] = names if hasattr(names, "lookup") else list(names)
        self.xy = np.asarray(xy, dtype=np.float64).reshape(n, 2)
        # Per-node and per-lane columns that are the same everywhere (no yaw, one level, no
        # flags, no limits) are read-only broadcasts: a big grid map holds none of them.
        self.yaw = _column(yaw, np.float64, np.nan, n)
        if level is None:
            self.level_names = ["L1"]
            self.level = _column(None, np.int32, 0, n)
        else:
            levels = list(level)
            self.level_names = sorted(set(levels))
            lookup = {name: k for k, name in enumerate(self.level_names)}
            self.level = np.fromiter((lookup[v] for v in levels), dtype=np.int32, count=n)
        self.properties = {p: _column(None, np.bool_, False, n) for p in NODE_PROPERTIES}
        for key, flags in (properties or {}).items():
            if key not in self.properties:
                raise ConfigError(_unknown("node property", key, NODE_PROPERTIES))
            self.properties[key] = np.asarray(flags, dtype=bool)
        index = _index_dtype(max(n, 2 * m))
        self.lane_from = np.asarray(lane_from, dtype=index)
        self.lane_to = np.asarray(lane_to, dtype=index)
        self.bidirectional = _column(bidirectional, np.bool_, False, m)
        self.speed_limit = _column(speed_limit, np.float64, np.inf, m)
        self.mutex = _column(mutex, np.int64, -1, m)
        self._check()
        find: Callable[[str], int | None] | None = getattr(self.names, "lookup", None)
        self._lookup = find or {name: k for k, name in enumerate(self.names)}.get
        self.lane_length, self.axis_aligned = _lengths(self.xy, self.lane_from, self.lane_to)
        # What routing minimises: the length, or more where a lane says so (a lift's lanes,
        # no length in the plane, cost their ride)
        self.lane_cost = self.lane_length
        if lane_cost is not None:
            self.lane_cost = np.maximum(self.lane_length, np.asarray(lane_cost, np.float64))
        self._closed: set[int] = set()  # lanes closed to routing (`set_lane_closed`)
        self._open_cost = self.lane_cost
        self._build_adjacency()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in _VIEWS:  # memoryviews do not pickle; they are made again from the arrays
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._make_views()

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_lists(
        cls, nodes: Iterable[Mapping[str, Any]], lanes: Iterable[Mapping[str, Any]]
    ) -> NavGraph:
        """From node dicts ({name, x, y, yaw?, level?, <property>: true}) and lane dicts
        ({from, to, bidirectional?, speed_limit?, mutex?}); lanes name their nodes."""
        nodes, lanes = list(nodes), list(lanes)
        for k, node in enumerate(nodes):
            if not isinstance(node, Mapping) or "name" not in node:
                raise ConfigError(f"nodes[{k}]: expected {{name, x, y, ...}}, got {node!r:.60}")
            for key in ("x", "y"):
                if not is_finite_number(node.get(key)):
                    raise ConfigError(
                        f"nodes[{k}].{key} ('{node['name']}'): expected a number "
                        f"of metres, got {node.get(key)!r:.40}"
                    )
        for j, lane in enumerate(lanes):
            if not isinstance(lane, Mapping) or "from" not in lane or "to" not in lane:
                raise ConfigError(f"lanes[{j}]: expected {{from, to, ...}}, got {lane!r:.60}")
            limit = lane.get("speed_limit")
            if limit is not None and not (is_finite_number(limit) and limit > 0):
                raise ConfigError(
                    f"lanes[{j}].speed_limit: expected m/s > 0 (leave it out for "
                    f"no limit), got {limit!r:.40}"
                )
        names = [str(node["name"]) for node in nodes]
        seen: dict[str, int] = {}
        for k, name in enumerate(names):
            if name in seen:
                raise ConfigError(
                    f"nodes[{k}]: duplicate node name '{name}' (also nodes[{seen[name]}])"
                )
            seen[name] = k
        xy = np.array([[float(node["x"]), float(node["y"])] for node in nodes]).reshape(-1, 2)
        props = {p: np.array([bool(node.get(p, False)) for node in nodes]) for p in NODE_PROPERTIES}
        groups: dict[str, int] = {}

        def node_of(lane: Mapping[str, Any], end: str, j: int) -> int:
            name = str(lane[end])
            if name not in seen:
                raise ConfigError(f"lanes[{j}].{end}: {_unknown('node', name, names)}")
            return seen[name]

        mutex = [
            groups.setdefault(str(g), len(groups)) if (g := lane.get("mutex")) else -1
            for lane in lanes
        ]
        return cls(
            names,
            xy,
            np.array([node_of(lane, "from", j) for j, lane in enumerate(lanes)], dtype=np.int64),
            np.array([node_of(lane, "to", j) for j, lane in enumerate(lanes)], dtype=np.int64),
            yaw=np.array([float(node.get("yaw", np.nan)) for node in nodes]),
            level=[str(node.get("level", "L1")) for node in nodes],
            properties=props,
            bidirectional=np.array([bool(lane.get("bidirectional", True)) for lane in lanes]),
            speed_limit=np.array([float(lane.get("speed_limit") or np.inf) for lane in lanes]),
            # (None: no limit; 0 and below were refused above)
            mutex=np.array(mutex, dtype=np.int64),
        )

    def _check(self) -> None:
        n = len(self.names)
        if not np.all(np.isfinite(self.xy)):
            bad = int(np.flatnonzero(~np.isfinite(self.xy).all(axis=1))[0])
            raise ConfigError(f"node '{self.names[bad]}': x and y must be finite")
        for name, arr in (("lane_from", self.lane_from), ("lane_to", self.lane_to)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                raise ConfigError(f"{name}: lane ends must be node indices 0..{n - 1}")
        loops = np.flatnonzero(self.lane_from == self.lane_to)
        if loops.size:
            raise ConfigError(f"lanes[{int(loops[0])}]: a lane must join two different nodes")
        if np.any(~(self.speed_limit > 0)):
            raise ConfigError("lane speed limits must be > 0 m/s")

    def _build_adjacency(self) -> None:
        """Directed edges (each bidirectional lane both ways, after the one-way edges) as CSR:
        for node u, its edges are `edge_to[offsets[u]:offsets[u + 1]]` with lane
        `edge_lane[...]`. Built one array at a time, each temporary let go before the next:
        a big grid map's peak is the graph and about one more edge array."""
        m = len(self.lane_from)
        index = self.lane_from.dtype
        back = np.flatnonzero(self.bidirectional).astype(index)
        src = np.concatenate((self.lane_from, self.lane_to[back]))
        order = np.argsort(src, kind="stable")
        del src
        dst = np.concatenate((self.lane_to, self.lane_from[back]))
        self.edge_to = dst[order]
        del dst
        lane = np.concatenate((np.arange(m, dtype=index), back))
        self.edge_lane = lane[order]
        del lane, order
        n = len(self.names)
        counts = np.bincount(self.lane_from, minlength=n)
        counts += np.bincount(self.lane_to[back], minlength=n)
        self.offsets = np.zeros(n + 1, dtype=_index_dtype(len(self.edge_to)))
        np.cumsum(counts, out=self.offsets[1:])
        self._make_views()

    def _make_views(self) -> None:
        """Plain-number access for the search loops: indexing a memoryview gives a Python int
        or float as fast as a list does (indexing NumPy gives NumPy scalars, slowly), and it
        holds no copy."""
        self.xs, self.ys = self.xy[:, 0].data, self.xy[:, 1].data  # (`.data`: a memoryview)
        self._to, self._start = self.edge_to.data, self.offsets.data
        self._lane, self._length = self.edge_lane.data, self.lane_cost.data

    # -- queries ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.names)

    @property
    def lane_count(self) -> int:
        """How many lanes the graph has (a two-way lane counts once)."""
        return len(self.lane_from)

    def node(self, name_or_index: str | int) -> int:
        """A node index from its name (or an index, checked)."""
        if isinstance(name_or_index, str):
            found: int | None = self._lookup(name_or_index)
            if found is None:
                explain = getattr(self.names, "explain", None)  # a grid map's lazy cell names
                name = name_or_index
                raise ConfigError(explain(name) if explain else _unknown("node", name, self.names))
            return found
        k = int(name_or_index)
        if not 0 <= k < len(self.names):
            raise ConfigError(f"node index {k} is not in 0..{len(self.names) - 1}")
        return k

    def with_lanes(
        self, lane_from: Sequence[int], lane_to: Sequence[int], cost: Sequence[float]
    ) -> NavGraph:
        """This graph with more two-way lanes (each with its routing cost, m)."""
        m = self.lane_count
        return NavGraph(
            self.names,
            self.xy,
            np.concatenate((self.lane_from, np.asarray(lane_from, dtype=self.lane_from.dtype))),
            np.concatenate((self.lane_to, np.asarray(lane_to, dtype=self.lane_to.dtype))),
            yaw=self.yaw,
            level=[self.level_names[k] for k in self.level.tolist()],
            properties=self.properties,
            bidirectional=np.concatenate((self.bidirectional, np.ones(len(lane_from), bool))),
            speed_limit=np.concatenate((self.speed_limit, np.full(len(lane_from), np.inf))),
            mutex=np.concatenate((self.mutex, np.full(len(lane_from), -1))),
            lane_cost=np.concatenate((self.lane_cost[:m], np.asarray(cost, np.float64))),
        )

    def lane(self, a: str | int, b: str | int) -> int:
        """The lane that leads from node `a` to node `b` (a two-way lane either way round);
        an error naming them when there is none."""
        u, v = self.node(a), self.node(b)
        for e in range(self._start[u], self._start[u + 1]):
            if self._to[e] == v:
                return int(self._lane[e])
        raise ConfigError(
            f"no lane leads from '{self.names[u]}' to '{self.names[v]}'"
            + (
                ""
                if self.successors(u) == []
                else " (lanes from there go to "
                + ", ".join(f"'{self.names[w]}'" for w in self.successors(u)[:6])
                + ")"
            )
        )

    @property
    def closed_lanes(self) -> frozenset[int]:
        """The lanes closed now (`set_lane_closed`): no route goes along them."""
        return frozenset(self._closed)

    def set_lane_closed(self, lane: int, closed: bool) -> None:
        """Close a lane to routing (a blocked aisle: its cost becomes infinite, so `route`
        finds a way round, or none) or open it again."""
        shut = self._closed
        if not shut and closed:  # (its own costs: the lengths may be shared)
            self._open_cost = self.lane_cost.copy()
            self.lane_cost = self.lane_cost.copy()
        if closed:
            shut.add(lane)
            self.lane_cost[lane] = np.inf
        elif lane in shut:
            shut.discard(lane)
            self.lane_cost[lane] = self._open_cost[lane]
        self._length = self.lane_cost.data

    @contextlib.contextmanager
    def closed_lanes_open(self) -> Iterator[None]:
        """Route as if no lane were closed, within the block (the way to a place that only a
        closed lane leads to, to wait at it until it opens)."""
        self._length = self._open_cost.data
        try:
            yield
        finally:
            self._length = self.lane_cost.data

    def successors(self, u: int) -> list[int]:
        """The nodes one lane from node `u`, in the lanes' directions."""
        return self._to[self._start[u] : self._start[u + 1]].tolist()

    @functools.cached_property
    def typical_lane_length(self) -> float:
        """The median lane length (m; 1.0 for a graph without lanes): a site's "one hop"."""
        return float(np.median(self.lane_length)) if len(self.lane_length) else 1.0

    def nodes_with(self, prop: str) -> list[str]:
        """Names of the nodes with a property ("charger", "parking_spot", ...)."""
        if prop not in self.properties:
            raise ConfigError(_unknown("node property", prop, NODE_PROPERTIES))
        return [self.names[k] for k in np.flatnonzero(self.properties[prop]).tolist()]

    def reachable(self, sources: Iterable[int]) -> np.ndarray:
        """Which nodes some route from `sources` (node indices) reaches, as a bool array (N,):
        one breadth-first walk along the lanes' directions, a whole frontier at a time with
        NumPy once it is wide (a big grid's), node by node while it is narrow (a long chain's)."""
        seen = np.zeros(len(self.names), dtype=bool)
        frontier = np.unique(np.fromiter(sources, dtype=np.int64))
        seen[frontier] = True
        to, start = self._to, self._start
        while len(frontier):
            if len(frontier) < 64:
                nxt = []
                for u in frontier.tolist():
                    for v in to[start[u] : start[u + 1]].tolist():
                        if not seen[v]:
                            seen[v] = True
                            nxt.append(v)
                frontier = np.array(nxt, dtype=np.int64)
                continue
            first = self.offsets[frontier]
            count = self.offsets[frontier + 1] - first
            skip = np.repeat(first - np.cumsum(count) + count, count)
            ahead = self.edge_to[skip + np.arange(len(skip))]
            frontier = np.unique(ahead[~seen[ahead]])
            seen[frontier] = True
        return seen

    def nearest_node(self, x: float, y: float, level: str | None = None) -> int:
        """The node closest to (x, y), on `level` when given."""
        return int(self.nearest_nodes(np.array([[x, y]]), level)[0][0])

    def nearest_nodes(
        self, points: FloatArray, level: str | None = None
    ) -> tuple[IntArray, FloatArray]:
        """For each point (P, 2): the closest node (on `level` when given) and its distance
        (m); ties go to the lowest node index. A big graph uses a grid of cells of nodes
        (built on first use) instead of measuring every node for every point."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        allowed = None
        if level is not None:
            if level not in self.level_names:
                raise ConfigError(_unknown("level", level, self.level_names))
            allowed = self.level == self.level_names.index(level)
        if len(self.names) == 0:
            raise ConfigError("the site graph has no nodes")
        if len(self.names) <= nearest.SMALL_GRAPH:
            return nearest.brute_force(self.xy, p, allowed)
        return self._node_index.nearest(p, allowed)

    @functools.cached_property
    def _node_index(self) -> nearest.NodeIndex:
        return nearest.NodeIndex(self.xy)

    def lane_at(self, points: FloatArray) -> tuple[IntArray, FloatArray]:
        """For each point (N, 2): the nearest lane and the distance to it (m)."""
        p = np.atleast_2d(np.asarray(points, dtype=np.float64))
        a, b = self.xy[self.lane_from], self.xy[self.lane_to]
        ab = b - a
        length2 = np.maximum((ab**2).sum(axis=1), 1e-18)
        best = np.zeros(len(p), dtype=np.int64)
        dist = np.full(len(p), np.inf)
        for start in range(0, len(a), 4096):  # bounded memory: points x a block of lanes
            s = slice(start, start + 4096)
            ap = p[:, None, :] - a[None, s]
            t = np.clip((ap * ab[None, s]).sum(axis=2) / length2[None, s], 0.0, 1.0)
            closest_point = a[None, s] + t[..., None] * ab[None, s]
            d = np.hypot(*(p[:, None, :] - closest_point).transpose(2, 0, 1))
            k = d.argmin(axis=1)
            dk = d[np.arange(len(p)), k]
            better = dk < dist
            best[better], dist[better] = k[better] + start, dk[better]
        return best, dist

    def route(
        self,
        start: str | int,
        goal: str | int,
        avoid: Iterable[int] = (),
        max_expansions: int | None = None,
        weight: float = 1.0,
    ) -> Route:
        """The shortest route from `start` to `goal` along lanes (A*, Euclidean heuristic).
        `avoid` lists node indices the route must not pass (traffic control going around);
        `max_expansions` gives up (RouteError) after visiting that many nodes; `weight` > 1
        searches faster for a route at most that many times longer than the shortest."""
        s, g = self.node(start), self.node(goal)
        blocked = set(avoid) - {s}
        limit = max_expansions if max_expansions is not None else len(self.names) + 1
        previous: Any = None  # (a map or an array: the node before each node on the way)
        if g not in blocked:
            ran, previous = search_kernel.search(  # compiled, with Numba: the same route
                self.xy,
                self._to,
                self._start,
                self._lane,
                self._length,
                s,
                g,
                blocked,
                limit,
                weight,
                self.axis_aligned,
            )
            if not ran:
                previous = self._search(s, g, blocked, limit, weight)
        if previous is None:
            around = f" around {len(blocked)} avoided nodes" if blocked else ""
            if max_expansions is not None:
                around += f" within {max_expansions} nodes searched"
            raise RouteError(
                f"no route from '{self.names[s]}' to '{self.names[g]}'{around}: they are not "
                "connected (check the lanes and their directions)"
            )
        path = [g]
        while path[-1] != s:
            path.append(int(previous[path[-1]]))
        path.reverse()
        nodes = np.array(path, dtype=np.int64)
        legs = self.legs(nodes)
        return Route(
            tuple(path),
            self.xy[nodes].copy(),
            float(self.lane_length[legs].sum()) if legs.size else 0.0,
            self.speed_limit[legs],
        )

    def _search(
        self, s: int, g: int, blocked: set[int], limit: int, weight: float = 1.0
    ) -> dict[int, int] | None:
        xs, ys = self.xs, self.ys
        gx, gy = xs[g], ys[g]
        to, start, lane, length = self._to, self._start, self._lane, self._length
        # On a graph whose lanes all run along x or y (grid maps, generated layouts) no route
        # is shorter than the Manhattan distance: a far closer estimate than the straight
        # line, so far fewer nodes are searched (an open grid's corner to corner: a line of
        # nodes instead of the whole square).
        manhattan = self.axis_aligned
        best = {s: 0.0}
        previous: dict[int, int] = {}
        # Ties on the estimate go to the node farthest along (-d first): on grid-like graphs
        # many nodes tie, and breadth-first among them would visit most of the box.
        dx, dy = xs[s] - gx, ys[s] - gy
        h = abs(dx) + abs(dy) if manhattan else math.sqrt(dx * dx + dy * dy)
        frontier = [(weight * h, -0.0, s)]
        done: set[int] = set(blocked)
        while frontier:
            _, neg_d, u = heapq.heappop(frontier)
            d = -neg_d
            if u == g:
                return previous
            if u in done:
                continue
            done.add(u)
            limit -= 1
            if limit < 0:
                return None
            for e in range(start[u], start[u + 1]):
                v = to[e]
                nd = d + length[lane[e]]
                if nd < best.get(v, math.inf):
                    best[v] = nd
                    previous[v] = u
                    dx, dy = xs[v] - gx, ys[v] - gy
                    h = abs(dx) + abs(dy) if manhattan else math.sqrt(dx * dx + dy * dy)
                    heapq.heappush(frontier, (nd + weight * h, -nd, v))
        return None

    def legs(self, nodes: Sequence[int] | IntArray) -> IntArray:
        """The lanes a route drives: for each consecutive pair of nodes, the shortest lane
        from one to the other."""
        legs = []
        to, lane, length = self._to, self._lane, self._length
        for u, v in itertools.pairwise(np.asarray(nodes).tolist()):
            edges = [lane[e] for e in range(self._start[u], self._start[u + 1]) if to[e] == v]
            legs.append(min(edges, key=length.__getitem__))
        return np.array(legs, dtype=np.int64)


_VIEWS = ("xs", "ys", "_to", "_start", "_lane", "_length")


def _index_dtype(count: int) -> type[np.signedinteger[Any]]:
    """Node, lane and edge indices in 4 bytes (8 for graphs of over two billion)."""
    return np.int32 if count < np.iinfo(np.int32).max else np.int64


def _column(values: Any, dtype: Any, default: Any, count: int) -> np.ndarray:
    """`values` as an array of `dtype`; without values, `default` for all `count` rows as a
    read-only broadcast that takes no memory."""
    if values is None:
        return np.broadcast_to(np.array(default, dtype=dtype), (count,))
    return np.asarray(values, dtype=dtype)


def _lengths(
    xy: FloatArray, a: IntArray, b: IntArray, block: int = 1 << 20
) -> tuple[FloatArray, bool]:
    """Lane lengths |xy[b] - xy[a]| (a block of lanes at a time: no (m, 2) temporaries), and
    whether every lane runs along x or along y."""
    out = np.empty(len(a), dtype=np.float64)
    aligned = True
    for s in range(0, len(a), block):
        d = xy[b[s : s + block]] - xy[a[s : s + block]]
        out[s : s + block] = np.hypot(d[:, 0], d[:, 1])
        aligned = aligned and bool(np.all((d[:, 0] == 0) | (d[:, 1] == 0)))
    return out, aligned


def _unknown(what: str, name: str, known: Sequence[str]) -> str:
    guess = closest(name, known) if len(known) <= 10_000 else None  # difflib is slow on more
    hint = f"did you mean '{guess}'?" if guess else f"{len(known)} known"
    return f"unknown {what} '{name}': {hint}"
