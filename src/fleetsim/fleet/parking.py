"""`Parking`: where a fleet's robots with nothing to do stand. A robot that finishes its work
drives to the nearest free parking spot it reaches without passing a robot that stands, or
will stand, there; robots left elsewhere (no spot was free, or they made way) try again,
backing off; an idle robot in another's way moves aside."""

from __future__ import annotations

import math

import numpy as np

from fleetsim.errors import FleetSimError
from fleetsim.fleet.traffic import TrafficControl

RETRY_S = 1.0  # how often robots with nothing to do off a parking spot look for one
MAKE_WAY_LANES = 6  # an idle robot in the way looks this many lanes away for a free node


class Parking:
    """The site's parking spots (`spots`, node indices; none when parking is off) and `bound`
    (R,): the spot each robot is driving to (-1: none)."""

    def __init__(self, traffic: TrafficControl, enabled: bool) -> None:
        self.traffic = traffic
        self.graph = graph = traffic.graph
        names = graph.nodes_with("parking_spot") if enabled else []
        self.spots = [graph.node(n) for n in names]
        self.is_spot = np.zeros(len(graph), dtype=bool)
        self.is_spot[self.spots] = True
        r = len(traffic.robots)
        self.bound = np.full(r, -1, dtype=np.int64)
        self._retry = np.zeros(r)  # when a robot off a parking spot may look again
        self._tries = np.zeros(r, dtype=np.int64)
        self._next_round = 0.0

    def arrived(self, i: int) -> None:
        """Robot i reached where it was sent: somewhere new, a stray unless it is a spot."""
        self.bound[i] = -1
        self._retry[i] = 0.0

    def send(self, i: int, claimed: set[int], avoid: set[int] | None = None) -> bool:
        """Send robot i to the nearest free spot it can reach without passing a robot that
        stands idle or is bound for a spot (or the nodes in `avoid`), unless it is on one
        (and `avoid` is None). `claimed`: nodes other robots are bound for."""
        t, graph = self.traffic, self.graph
        here = t.node_of(i)
        if not self.spots or (avoid is None and self.is_spot[here]):
            return False
        claimed = claimed | set(self.bound[self.bound >= 0].tolist())
        # not through a robot that stands, or will stand, on its way (one parked in a column)
        others = (t.idle_nodes() | claimed | (avoid or set())) - {here}
        spots = np.asarray(self.spots)
        # nearest first, on its own floor before any other (another floor is a lift ride away)
        away = np.hypot(*(graph.xy[spots] - graph.xy[here]).T)
        spots = spots[np.lexsort((away, graph.level[spots] != graph.level[here]))]
        near = [p for p in spots.tolist() if p not in claimed and p not in others and p != here]
        hop = graph.typical_lane_length
        for spot in near[:5]:
            # a way round the others is near or not worth it: search a few times the distance
            far = float(np.hypot(*(graph.xy[spot] - graph.xy[here]))) / max(hop, 1e-6)
            try:
                t.send(i, spot, avoid=sorted(others), max_expansions=int(8 * far) + 64)
            except FleetSimError:
                continue
            self.bound[i] = spot
            return True
        return False

    def due(self, now: float) -> bool:
        """Whether robots off a spot look for one now (every `RETRY_S`, when there are spots)."""
        return bool(self.spots) and now >= self._next_round

    def strays(self, free: np.ndarray, now: float, claimed: set[int]) -> None:
        """Robots left with nothing to do (`free`, (R,) bool) off a spot try again (call when
        `due`): an idle robot must not block a lane. No way yet: each backs off (1, 2, 4 .. 16
        s) while the traffic moves."""
        self._next_round = now + RETRY_S
        stray = free & ~self.traffic.active & (self._retry <= now)
        for i in np.flatnonzero(stray).tolist():
            if self.is_spot[self.traffic.node_of(i)]:
                self._retry[i] = math.inf  # parked: looked at again when it next arrives
                continue
            if self.send(i, claimed):
                self._tries[i] = 0
            else:
                self._retry[i] = now + min(2.0 ** self._tries[i], 16.0)
                self._tries[i] += 1

    def make_way(self, idle: int, waiting: int, claimed: set[int]) -> None:
        """Send an idle robot that blocks another to a free node off the other's route, or
        failing that to a parking spot (another, if it is on one)."""
        t = self.traffic
        keep_clear = set(t.route_ahead(waiting))
        start = t.node_of(idle)
        frontier, seen = [start], {start}
        for _ in range(MAKE_WAY_LANES):
            nxt = []
            for u in frontier:
                for v in self.graph.successors(u):
                    if v in seen:
                        continue
                    seen.add(v)
                    if v not in keep_clear and t.is_free_for(idle, v):
                        try:
                            t.send(idle, v)
                        except FleetSimError:
                            continue
                        return
                    nxt.append(v)
            frontier = nxt
        self.send(idle, claimed, avoid=set())
