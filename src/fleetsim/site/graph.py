"""`NavGraph`: a navigation graph of named nodes and lanes, stored as arrays.

Nodes: name, x, y (m), yaw (rad, NaN when free), level, and property flags (parking spot,
charger, holding point, pickup, dropoff). Lanes: from -> to, bidirectional or not, speed limit
(m/s, inf when none), mutex group (-1 when none). Routing is A* over lane lengths on a compressed
adjacency (CSR) of directed edges, one search per request, never per step.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, closest, is_finite_number

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
    ) -> None:
        n, m = len(names), len(lane_from)
        # A list of names, or a lazy sequence with a `lookup(name)` (a grid map's cells).
        self.names: Sequence[str] = names if hasattr(names, "lookup") else list(names)
        self.xy = np.asarray(xy, dtype=np.float64).reshape(n, 2)
        self.yaw = np.full(n, np.nan) if yaw is None else np.asarray(yaw, dtype=np.float64)
        levels = ["L1"] * n if level is None else list(level)
        self.level_names = sorted(set(levels))
        lookup = {name: k for k, name in enumerate(self.level_names)}
        self.level = np.fromiter((lookup[v] for v in levels), dtype=np.int32, count=n)
        self.properties = {p: np.zeros(n, dtype=bool) for p in NODE_PROPERTIES}
        for key, flags in (properties or {}).items():
            if key not in self.properties:
                raise ConfigError(_unknown("node property", key, NODE_PROPERTIES))
            self.properties[key] = np.asarray(flags, dtype=bool)
        self.lane_from = np.asarray(lane_from, dtype=np.int64)
        self.lane_to = np.asarray(lane_to, dtype=np.int64)
        self.bidirectional = (
            np.zeros(m, dtype=bool) if bidirectional is None else np.asarray(bidirectional, bool)
        )
        self.speed_limit = (
            np.full(m, np.inf) if speed_limit is None else np.asarray(speed_limit, np.float64)
        )
        self.mutex = np.full(m, -1, np.int64) if mutex is None else np.asarray(mutex, np.int64)
        self._check()
        find: Callable[[str], int | None] | None = getattr(self.names, "lookup", None)
        self._lookup = find or {name: k for k, name in enumerate(self.names)}.get
        self.lane_length = np.hypot(*(self.xy[self.lane_to] - self.xy[self.lane_from]).T)
        self._build_adjacency()

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
                    raise ConfigError(f"nodes[{k}].{key} ('{node['name']}'): expected a number "
                                      f"of metres, got {node.get(key)!r:.40}")  # fmt: skip
        for j, lane in enumerate(lanes):
            if not isinstance(lane, Mapping) or "from" not in lane or "to" not in lane:
                raise ConfigError(f"lanes[{j}]: expected {{from, to, ...}}, got {lane!r:.60}")
            limit = lane.get("speed_limit")
            if limit is not None and not (is_finite_number(limit) and limit > 0):
                raise ConfigError(f"lanes[{j}].speed_limit: expected m/s > 0 (leave it out for "
                                  f"no limit), got {limit!r:.40}")  # fmt: skip
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

        mutex = [groups.setdefault(str(g), len(groups)) if (g := lane.get("mutex")) else -1
                 for lane in lanes]  # fmt: skip
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
        """Directed edges (each bidirectional lane both ways) as CSR: for node u, its edges are
        `edge_to[offsets[u]:offsets[u + 1]]` with lane `edge_lane[...]`."""
        lanes = np.arange(len(self.lane_from))
        back = lanes[self.bidirectional]
        src = np.concatenate((self.lane_from, self.lane_to[back]))
        dst = np.concatenate((self.lane_to, self.lane_from[back]))
        lane = np.concatenate((lanes, back))
        order = np.argsort(src, kind="stable")
        del src
        # Compact arrays of Python numbers for the search loop (indexing NumPy scalars one by
        # one is slow, and lists of millions of ints cost gigabytes), and the NumPy arrays as
        # views of the same memory: a big grid map's graph is held once, not twice.
        self._to = array("q", dst[order].astype(np.int64).tobytes())
        self.edge_to = np.frombuffer(self._to, dtype=np.int64)
        del dst
        self.edge_lane = lane[order]
        self._cost = array("d", self.lane_length[self.edge_lane].astype(np.float64).tobytes())
        counts = np.bincount(self.lane_from, minlength=len(self.names))
        counts += np.bincount(self.lane_to[back], minlength=len(self.names))
        self._start = array("q", bytes(8 * (len(self.names) + 1)))
        self.offsets = np.frombuffer(self._start, dtype=np.int64)
        np.cumsum(counts, out=self.offsets[1:])
        self._xs = array("d", np.ascontiguousarray(self.xy[:, 0]).tobytes())
        self._ys = array("d", np.ascontiguousarray(self.xy[:, 1]).tobytes())

    # -- queries ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.names)

    @property
    def lane_count(self) -> int:
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

    def nodes_with(self, prop: str) -> list[str]:
        """Names of the nodes with a property ("charger", "parking_spot", ...)."""
        if prop not in self.properties:
            raise ConfigError(_unknown("node property", prop, NODE_PROPERTIES))
        return [self.names[k] for k in np.flatnonzero(self.properties[prop]).tolist()]

    def reachable(self, sources: Iterable[int]) -> np.ndarray:
        """Which nodes some route from `sources` (node indices) reaches, as a bool array (N,):
        one breadth-first walk along the lanes' directions."""
        seen = np.zeros(len(self.names), dtype=bool)
        frontier = sorted(set(sources))
        seen[frontier] = True
        to, start = self._to, self._start
        while frontier:
            nxt = []
            for u in frontier:
                for e in range(start[u], start[u + 1]):
                    v = to[e]
                    if not seen[v]:
                        seen[v] = True
                        nxt.append(v)
            frontier = nxt
        return seen

    def nearest_node(self, x: float, y: float, level: str | None = None) -> int:
        """The node closest to (x, y), on `level` when given."""
        d = np.hypot(self.xy[:, 0] - x, self.xy[:, 1] - y)
        if level is not None:
            d[self.level != self.level_names.index(level)] = np.inf
        return int(np.argmin(d))

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
        previous = None if g in blocked else self._search(s, g, blocked, limit, weight)
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
            path.append(previous[path[-1]])
        path.reverse()
        nodes = np.array(path, dtype=np.int64)
        legs = self._legs(nodes)
        return Route(
            tuple(path),
            self.xy[nodes].copy(),
            float(self.lane_length[legs].sum()) if legs.size else 0.0,
            self.speed_limit[legs],
        )

    def _search(
        self, s: int, g: int, blocked: set[int], limit: int, weight: float = 1.0
    ) -> dict[int, int] | None:
        gx, gy = self.xy[g]
        xs, ys = self._xs, self._ys
        to, cost, start = self._to, self._cost, self._start
        best = {s: 0.0}
        previous: dict[int, int] = {}
        # Ties on the estimate go to the node farthest along (-d first): on grid-like graphs
        # many nodes tie, and breadth-first among them would visit most of the box.
        frontier = [(weight * math.hypot(xs[s] - gx, ys[s] - gy), -0.0, s)]
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
                nd = d + cost[e]
                if nd < best.get(v, math.inf):
                    best[v] = nd
                    previous[v] = u
                    h = weight * math.hypot(xs[v] - gx, ys[v] - gy)
                    heapq.heappush(frontier, (nd + h, -nd, v))
        return None

    def _legs(self, nodes: IntArray) -> IntArray:
        """The shortest lane used for each consecutive pair of route nodes."""
        legs = []
        for u, v in zip(nodes[:-1].tolist(), nodes[1:].tolist(), strict=True):
            edges = range(self._start[u], self._start[u + 1])
            legs.append(min((e for e in edges if self._to[e] == v), key=self._cost.__getitem__))
        return self.edge_lane[np.array(legs, dtype=np.int64)] if legs else np.empty(0, np.int64)


def _unknown(what: str, name: str, known: Sequence[str]) -> str:
    guess = closest(name, known) if len(known) <= 10_000 else None  # difflib is slow on more
    hint = f"did you mean '{guess}'?" if guess else f"{len(known)} known"
    return f"unknown {what} '{name}': {hint}"
