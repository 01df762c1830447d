"""Robots between floors, for traffic control: a route that changes level rides a lift.

The ride itself (call, board, ride, leave, let go; who may be in the cabin) is the lifts'
service (`fleetsim.devices.lift_ride`); this is only traffic control's side of it. A route's
lift lane (from a lift's node on one level to its node on another) is never driven. The cabin
node is a stretch of its own: the robot drives to the node before it (the lift's entry on its
level) and calls the lift only from there, on the last lane into the entry or standing on it.
It enters the cabin once the cabin is there with its doors open for it, boards standing on the
lift's node, and drives out when the cabin has carried it to the other level.

A cabin that has room for two of the fleet's robots side by side (and a capacity of two or
more) carries robots going the same way together: each stands on a spot of its own in the
cabin (`spots`: where the cabin's node is for that robot), and the robot next in line at the
entry, bound for the same level, joins the session of the robot entering (the cabin waits for
it to board). Robots of one session do not keep each other off the cabin's nodes.

A robot waiting for a lift waits for whoever holds the lift: that is an edge of traffic
control's wait-for graph (`holder`), so a robot holding a lift while it waits for the waiting
robot is a deadlock, found and undone like any other; a lift that is not moving is no
progress for the stall watch.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

PREFIX = "robot:"  # a fleet robot's requester name at the lifts


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
        self.cabins: dict[str, list[int]] = {}  # lift -> its nodes (one a level)
        for (a, _b), lift in sorted(self.rides.items()):
            if a not in self.cabins.setdefault(lift, []):
                self.cabins[lift].append(a)
        self.spots: dict[int, dict[int, tuple[float, float]]] = {}  # robot -> cabin node -> xy
        self._slots: dict[tuple[str, int], Any] = {}  # (lift, entry) -> spots in its cabin
        lifts = traffic.sim.lifts
        self.sharing = lifts is not None and any(lifts[name].capacity > 1 for name in self.cabins)
        self.index = {f"{PREFIX}{robot.name}": k for k, robot in enumerate(traffic.robots)}
        self.waiting: dict[str, set[int]] = {}  # lift -> robots asleep until it changes
        self.rides_done = 0
        if self.rides:
            traffic.sim.on("lift_changed", self._changed)

    def _rider(self, i: int) -> str:
        return f"{PREFIX}{self.t.robots[i].name}"

    def is_ride(self, a: int, b: int) -> bool:
        """Whether the lane a -> b is a lift ride."""
        return (a, b) in self.rides

    def enters_cabin(self, i: int, k: int) -> bool:
        """Whether robot i's route index k is a cabin it rides from (the next leg a ride)."""
        route = self.t.routes[i]
        return k + 1 < len(route) and (route[k], route[k + 1]) in self.rides

    def _level(self, node: int) -> str:
        g = self.t.graph
        return g.level_names[int(g.level[node])]

    def clear(self, i: int, nodes: list[int]) -> bool:
        """Whether robot i may take `nodes` (its next stretch, from the node it holds last):
        into a cabin only when it is there for it, along a lift lane only once the cabin has
        carried it."""
        if not self.rides:
            return True
        if i in self.spots and self._off_the_lift(i):
            self.spots.pop(i)  # (out of the cabin, its ride over: nodes where they are)
        route = self.t.routes[i]
        for a, b in itertools.pairwise(nodes):
            lift = self.rides.get((a, b))
            if lift is not None:  # the ride itself
                if not self._ride(i, lift, a, b):
                    return False
                continue
            if a in self.stops and not self._out(i, a):
                return False
            if b in self.stops:
                k = _index(route, b, int(self.t.next[i]) - 1)
                if k >= 0 and self.enters_cabin(i, k) and not self._enter(i, k):
                    return False
        return True

    def _enter(self, i: int, k: int) -> bool:
        """Into the cabin at route index k (from the entry at k - 1): called only from the
        entry, entered once the cabin is there for robot i."""
        route, rides = self.t.routes[i], self.lifts.rides
        cabin, beyond = route[k], route[k + 1]
        lift = self.rides[(cabin, beyond)]
        if int(self.t.next[i]) < k - 1:
            return False  # not at the entry yet: asked again as it drives on (awake)
        rider, entry = self._rider(i), route[k - 1]
        share = len(self._slots_of(lift, entry)) > 1
        rides.call(
            rider,
            lift,
            self._level(cabin),
            self._level(beyond),
            self.t.robots[i],
            self.t.radius,
            share=share,
        )
        if rides.may_enter(rider):
            self._take_spot(i, lift, entry)
            if share:
                self._next_in_line(i, entry, cabin)
            return True
        self.t._wait(i, cabin)  # waits for the lift (its holder: `holder`)
        self.waiting.setdefault(lift, set()).add(i)
        return False

    def _out(self, i: int, cabin: int) -> bool:
        """Out of the cabin on this level (a robot whose route changed while it rode leaves
        where its new route does, once the cabin is there for it)."""
        rides, rider = self.lifts.rides, self._rider(i)
        ride = rides.riding(rider)
        if ride is None or ride.phase not in ("aboard", "arrived"):
            return True
        rides.redirect(rider, self._level(cabin))
        if rides.arrived(rider):
            return True
        self._sleep(i, ride.lift)
        return False

    def _ride(self, i: int, lift: str, a: int, b: int) -> bool:
        """Along the lift lane a -> b: board standing on a, go on once the cabin is at b's
        level with its doors open."""
        rides, rider = self.lifts.rides, self._rider(i)
        ride = rides.riding(rider)
        if ride is None or ride.lift != lift:  # (lost its ride: ask again from the cabin)
            rides.call(rider, lift, self._level(a), self._level(b), self.t.robots[i], self.t.radius)
            ride = rides.riding(rider)
        rides.redirect(rider, self._level(b))  # (its route changed since it called)
        if ride.phase == "called":
            if ride.share and rides.lifts[lift].session == rider:
                k = _index(self.t.routes[i], a, int(self.t.next[i]) - 2)
                if k > 0:
                    self._next_in_line(i, self.t.routes[i][k - 1], a)
            if self.t.standing_on(i) != a:
                return False  # still driving in: asked again next step (awake)
            if not rides.board(rider):
                self._sleep(i, lift)  # not there for it, or full
                return False
        carried = ride.phase == "aboard"
        if rides.arrived(rider):
            self.rides_done += carried  # (counted once: when it first may drive out)
            return True
        self._sleep(i, lift)
        return False

    # -- sharing a cabin ----------------------------------------------------------------------

    def _slots_of(self, lift: str, entry: int) -> Any:
        """The spots in the lift's cabin for the fleet's robots coming in from `entry`."""
        key = (lift, entry)
        if key not in self._slots:
            xy = self.t.graph.xy[entry]
            self._slots[key] = self.lifts.rides.slots(lift, self.t.radius, xy)
        return self._slots[key]

    def _take_spot(self, i: int, lift: str, entry: int) -> None:
        """Robot i's spot in the cabin: one no robot of its session stands on (none where the
        cabin has room for one robot only: the cabin's node)."""
        slots = self._slots_of(lift, entry)
        self.spots.pop(i, None)
        if len(slots) < 2:
            return
        cabin = self.cabins[lift][0]
        taken = {self.spots[j][cabin] for j in self._session(lift) if j in self.spots}
        xy = next((p for p in map(tuple, slots.tolist()) if p not in taken), None)
        if xy is not None:
            self.spots[i] = dict.fromkeys(self.cabins[lift], (float(xy[0]), float(xy[1])))

    def _session(self, lift: str) -> list[int]:
        """The fleet robots of the lift's session (its holder and guests)."""
        device = self.lifts[lift]
        return [self.index[r] for r in (device.session, *device.guests) if r in self.index]

    def _next_in_line(self, i: int, entry: int, cabin: int) -> None:
        """Robots waiting for the entry robot i entered the cabin from (refused it, or a stretch
        ending there) or holding it, bound for the level it rides to, join its session while
        the cabin has room."""
        t, rides = self.t, self.lifts.rides
        ride = rides.riding(self._rider(i))
        if ride is None or float(np.hypot(*(t.graph.xy[entry] - t.graph.xy[cabin]))) <= (
            t.clearance
        ):  # (robot i keeps the entry while in the cabin: no one can follow it in)
            return
        behind = set(t._waiters.get(entry, ()))
        if int(t.owner[entry]) not in (-1, i):
            behind.add(int(t.owner[entry]))
        for j in sorted(behind, key=lambda j: (t.waiting_since[j], j)):
            route, nxt = t.routes[j], int(t.next[j])
            k = _index(route, entry, nxt - 1)
            if (
                k >= 0
                and k + 2 < len(route)
                and route[k + 1] == cabin
                and self.rides.get((cabin, route[k + 2])) == ride.lift
                and self._level(route[k + 2]) == ride.to
            ):
                rides.join(self._rider(j), self._rider(i), t.robots[j], t.radius)

    def _off_the_lift(self, i: int) -> bool:
        """Robot i has no ride and holds no cabin node."""
        if self.lifts.rides.riding(self._rider(i)) is not None:
            return False
        return not any(n in self.stops for n in self.t.held(i))

    def mates(self, i: int, j: int, node: int) -> bool:
        """Whether robots i and j ride in one session of the lift whose cabin `node` is (they
        do not keep each other off it)."""
        if node not in self.stops:
            return False
        rides = self.lifts.rides
        a, b = rides.riding(self._rider(i)), rides.riding(self._rider(j))
        if a is None or b is None or a.lift != b.lift or a.phase == "done" or b.phase == "done":
            return False
        device = self.lifts[a.lift]
        members = (device.session, *device.guests)
        return a.rider in members and b.rider in members

    def co_holder(self, i: int, node: int) -> int:
        """A robot of robot i's lift session that holds cabin `node` too (it keeps it when
        robot i lets it go), or -1."""
        if node not in self.stops:
            return -1
        ride = self.lifts.rides.riding(self._rider(i))
        if ride is None:
            return -1
        for j in self._session(ride.lift):
            if j != i and node in self.t.held(j):
                return j
        return -1

    def give_up(self, i: int, members: list[int]) -> bool:
        """Undo a deadlock through a lift: robot i, holding a lift it has not boarded while
        another robot of the cycle waits for that lift (or for one of its cabin's nodes),
        gives it up (from inside the cabin it
        backs out to the entry it came from, then carries on to its goal: it calls again from
        there, behind the robot it kept waiting). Returns whether it did."""
        if not self.rides:
            return False
        rides, rider = self.lifts.rides, self._rider(i)
        ride = rides.riding(rider)
        if ride is None or ride.phase != "called":
            return False
        t, cabins = self.t, self.cabins[ride.lift]
        if not any(
            self.holder(j) == i or int(t.waiting_on[j]) in cabins for j in members if j != i
        ):
            return False  # (no one of the cycle waits for this lift)
        here = t.standing_on(i)
        if here not in cabins and any(n in cabins for n in t.held(i)):
            return False  # driving into the cabin: it cannot give the lift up half-way
        if here in cabins:  # in the cabin: back out to its entry
            route = t.routes[i]
            k = _index(route, here, int(t.tail[i]))
            entry = route[k - 1] if k > 0 else -1
            if entry < 0 or entry in self.stops or t.blocker(i, entry) >= 0:
                return False
            goal = route[-1]
            t.send(i, entry)  # (its call is withdrawn: `rerouted`)
            t.stepping_aside[i] = goal
            return True
        rides.cancel(rider)  # at the entry: it calls again, behind the others
        t.wake(i)
        return True

    def _sleep(self, i: int, lift: str) -> None:
        self.waiting.setdefault(lift, set()).add(i)
        self.t._asleep[i] = True  # until the lift changes

    def _changed(self, lift: str, _state: dict[str, Any], _time: float) -> None:
        for i in self.waiting.pop(lift, set()):
            self.t._asleep[i] = False

    def rerouted(self, i: int) -> None:
        """Robot i has a new route: a lift it only waited for is let go (not one it is in)."""
        if self.rides:
            self.lifts.rides.cancel(self._rider(i))
            for waiting in self.waiting.values():
                waiting.discard(i)

    def holder(self, i: int) -> int:
        """The fleet robot holding the lift robot i waits to enter, or -1."""
        if not self.rides:
            return -1
        waits = self.lifts.rides.waiting_on(self._rider(i))
        if waits is None:
            return -1
        return next((self.index[r] for r in waits[1] if r in self.index), -1)

    def progressing(self) -> list[int]:
        """Robots waiting for or riding a lift whose cabin or doors are moving (a lift
        standing still is no progress, whoever holds it)."""
        if not self.rides:
            return []
        rides = self.lifts.rides
        out = []
        for rider, ride in rides.rides.items():
            i = self.index.get(rider)
            if (
                i is not None
                and ride.phase in ("called", "aboard")
                and rides.progressing(ride.lift)
            ):
                out.append(i)
        return out

    def waits_for(self, i: int) -> str | None:
        """What robot i waits for at a lift (for stall reports), if it does."""
        if not self.rides:
            return None
        ride = self.lifts.rides.riding(self._rider(i))
        if ride is None or ride.phase not in ("called", "aboard"):
            return None
        described: str | None = self.lifts.rides.describe(self._rider(i))
        return described

    def kpis(self) -> dict[str, Any]:
        """Lift rides; the lifts' trips, time in use and waits."""
        out: dict[str, Any] = {"lift_rides": self.rides_done}
        if self.lifts is not None:
            out.update(self.lifts.kpis())
        return out


def _index(route: list[int], node: int, start: int) -> int:
    """The first index of `node` in `route` from `start`, or -1."""
    for k in range(max(start, 0), len(route)):
        if route[k] == node:
            return k
    return -1
