"""Lanes closed while the fleet drives (a blocked aisle: `fleetsim.faults`' `lane_blocked`).

Closing a lane closes it in the site's graph, so every route from then on goes round it.
Robots that were to drive it and have not entered it give back what they hold beyond its entry
and are sent round; where only a closed lane leads to a place, the route goes through it and
the robot waits at its entry. No robot is let onto a closed lane (`refused`); robots already
on it drive on. Opening it again wakes the robots waiting at it.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.site import RouteError

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

ENTERED_M = 0.3  # a robot farther than this from the node it last passed is on the lane after


class LaneClosures:
    """The closed lanes of a `TrafficControl`, as the node pairs not to be driven (`legs`), and
    the robots waiting at one (`waiting`: robot -> (from node, to node))."""

    def __init__(self, traffic: TrafficControl) -> None:
        self.traffic = traffic
        self.legs: set[tuple[int, int]] = set()
        self.waiting: dict[int, tuple[int, int]] = {}

    def _legs(self, lane: int) -> set[tuple[int, int]]:
        g = self.traffic.graph
        u, v = int(g.lane_from[lane]), int(g.lane_to[lane])
        return {(u, v), (v, u)} if g.bidirectional[lane] else {(u, v)}

    def close(self, lane: int) -> list[int]:
        """Close `lane`; returns the robots sent round it."""
        t = self.traffic
        legs = self._legs(lane)
        t.graph.set_lane_closed(lane, True)
        self.legs |= legs
        sent = []
        xy = t.positions()
        for i in np.flatnonzero(t.active).tolist():
            route, nxt = t.routes[i], int(t.next[i])
            here = t.graph.xy[route[nxt - 1]]  # a robot still on the node it last passed has
            if math.hypot(*(xy[i] - here)) <= ENTERED_M:  # not entered the leg from it
                nxt -= 1
            ahead = [k for k in range(nxt, len(route) - 1) if (route[k], route[k + 1]) in legs]
            if not ahead:
                continue
            t.give_back_beyond(i, ahead[0])
            try:
                new = t.send(i, route[-1])
            except RouteError:
                continue  # not connected at all: it waits at the entry (`refused`)
            if not any(leg in legs for leg in itertools.pairwise(new)):
                sent.append(i)  # (else no way round: it goes to the entry and waits there)
        return sent

    def reopen(self, lane: int) -> None:
        """Open `lane` again; the robots waiting at it ask again."""
        legs = self._legs(lane)
        self.traffic.graph.set_lane_closed(lane, False)
        self.legs -= legs
        for i in [i for i, leg in self.waiting.items() if leg in legs]:
            del self.waiting[i]
            self.traffic.wake(i)

    def refused(self, i: int, nodes: list[int]) -> bool:
        """Whether robot i may not drive along `nodes` (one of their legs is closed); noted as
        waiting at it when so."""
        for leg in itertools.pairwise(nodes):
            if leg in self.legs:
                self.waiting[i] = leg
                return True
        self.waiting.pop(i, None)
        return False
