"""Robots between floors, for traffic control: a route that changes level rides a lift.

A route's lift lane (from a lift's node on one level to its node on another) is never driven.
Before the robot enters the cabin it asks for the lift at its level and waits short of the
shaft until the cabin is there with its doors open for it; in the cabin (standing on the
lift's node) it boards, sends the lift to the other level and waits while the cabin carries
it; when the doors open there it drives out, and once clear of the shaft it lets the lift go.
Each robot is its own session (one at a time in a cabin).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

CLEAR_M = 0.3  # out of the shaft by the robot's radius and this: the lift is let go


class LiftPassage:
    """The lifts the fleet's robots wait for and ride."""

    def __init__(self, traffic: TrafficControl) -> None:
        self.t = traffic
        self.lifts: Any = traffic.sim.lifts
        site = traffic.sim.site
        g = traffic.graph
        self.rides: dict[tuple[int, int], str] = {}  # (from node, to node) -> lift
        for lane, lift in (site.lift_lanes if site is not None and self.lifts else {}).items():
            a, b = int(g.lane_from[lane]), int(g.lane_to[lane])
            self.rides[(a, b)] = self.rides[(b, a)] = lift
        self.stops = {a for a, _ in self.rides}  # lift nodes
        # how far from its node a robot is out of each lift's shaft
        self.reach = {lift.name: 0.5 * max(lift.width, lift.depth) + traffic.radius + CLEAR_M
                      for lift in (site.lifts if site is not None else [])}  # fmt: skip
        self.session: dict[int, tuple[str, int]] = {}  # robot -> (lift, node it leaves from)
        self.waiting: dict[str, set[int]] = {}  # lift -> robots waiting for it
        self.rides_done = 0
        if self.rides:
            traffic.sim.on("lift_changed", self._changed)

    def _requester(self, i: int) -> str:
        return f"robot:{self.t.robots[i].name}"

    def is_ride(self, a: int, b: int) -> bool:
        """Whether the lane a -> b is a lift ride."""
        return (a, b) in self.rides

    def _level(self, node: int) -> str:
        g = self.t.graph
        return g.level_names[int(g.level[node])]

    def clear(self, i: int, nodes: list[int]) -> bool:
        """Whether robot i may take `nodes` (its next stretch, from the node it holds last):
        into a cabin only when it waits there for it, along a lift lane only once the cabin
        has carried it, out only while the doors are open."""
        if not self.rides:
            return True
        route = self.t.routes[i]
        for a, b in itertools.pairwise(nodes):
            lift = self.rides.get((a, b))
            if lift is not None:  # the ride itself
                if not self._ride(i, lift, a, b):
                    return False
                continue
            ride = self._ride_from(route, b) if b in self.stops else None
            if ride is not None and not self._call(i, ride, b):
                return False
        return True

    def _ride_from(self, route: list[int], node: int) -> str | None:
        """The lift robot's route rides from `node` (the next leg is a lift lane), if any."""
        for k in range(len(route) - 1):
            if route[k] == node:
                return self.rides.get((node, route[k + 1]))
        return None

    def _call(self, i: int, lift: str, node: int) -> bool:
        """Before entering the cabin at `node`: the lift is asked there; ready for robot i?"""
        level, requester = self._level(node), self._requester(i)
        self.lifts.request(lift, requester, level)
        self.session[i] = (lift, node)
        if self.lifts[lift].ready(level, requester):
            return True
        # Waiting for the cabin at `node` (whoever holds that node, in the cabin, is what it
        # waits for: deadlock detection sees the lift's queue) until the lift changes.
        self.t._wait(i, node)
        self.waiting.setdefault(lift, set()).add(i)
        return False

    def _ride(self, i: int, lift: str, a: int, b: int) -> bool:
        """Along the lift lane a -> b: board at a (standing in the cabin), send the cabin to
        b's level, and go on once it is there with the doors open."""
        requester, level = self._requester(i), self._level(b)
        device = self.lifts[lift]
        if device.session != requester:
            self._call(i, lift, a)  # (it lost its session: ask again from where it is)
            return False
        if requester not in device.aboard:
            if self.t.standing_on(i) != a:
                return False  # still driving in: asked again next step (awake)
            if not self.lifts.board(lift, requester, self.t.robots[i]):
                self._wait(i, lift)  # full
                return False
        self.lifts.request(lift, requester, level)
        if device.ready(level, requester):
            self.lifts.alight(lift, requester)
            if self.session.get(i) != (lift, b):
                self.session[i] = (lift, b)
                self.rides_done += 1
            return True
        self._wait(i, lift)
        return False

    def _wait(self, i: int, lift: str) -> None:
        self.waiting.setdefault(lift, set()).add(i)
        self.t._asleep[i] = True  # until the lift changes

    def _changed(self, lift: str, _state: dict[str, Any], _time: float) -> None:
        for i in self.waiting.pop(lift, set()):
            self.t._asleep[i] = False

    def step(self, positions: np.ndarray) -> None:
        """Let go of the lift once a robot has passed its node and is out of the shaft."""
        g = self.t.graph
        for i, (lift, node) in list(self.session.items()):
            route = self.t.routes[i]
            k = route.index(node) if node in route else -1
            if k >= int(self.t.next[i]):
                continue  # the cabin is still ahead: waiting to board
            d = positions[i] - g.xy[node]
            if float(np.hypot(d[0], d[1])) > self.reach[lift]:
                self.lifts.release(lift, self._requester(i))
                self.session.pop(i, None)

    def rerouted(self, i: int) -> None:
        """Robot i has a new route: a lift it only waited for is let go (not one it is in)."""
        held = self.session.get(i)
        if held is None:
            return
        lift, node = held
        if self.lifts[lift].session == self._requester(i) and self.t.standing_on(i) == node:
            return  # in the cabin: it keeps it
        self.lifts.release(lift, self._requester(i))
        self.session.pop(i, None)
        for waiting in self.waiting.values():
            waiting.discard(i)

    def progressing(self) -> list[int]:
        """Robots waiting for or riding a lift that is on the move or serving one of the
        fleet's robots (a lift held by someone else, standing still, is no progress)."""
        out = []
        for i, (lift, _node) in self.session.items():
            device = self.lifts[lift]
            busy = device.moving or device.door.value in ("opening", "closing")
            if busy or (device.session or "").startswith("robot:"):
                out.append(i)
        return out

    def waits_for(self, i: int) -> str | None:
        """What robot i waits for at a lift (for stall reports), if it does."""
        held = self.session.get(i)
        if held is None:
            return None
        device = self.lifts[held[0]]
        who = (
            f", held by {device.session}"
            if device.session not in (None, self._requester(i))
            else ""
        )
        return f"lift {device.name} (at {device.level}, doors {device.door.value}{who})"

    def kpis(self) -> dict[str, Any]:
        """Lift rides; the lifts' trips, time in use and waits."""
        out: dict[str, Any] = {"lift_rides": self.rides_done}
        if self.lifts is not None:
            out.update(self.lifts.kpis())
        return out
