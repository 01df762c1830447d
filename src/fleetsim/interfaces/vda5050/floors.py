"""VDA 5050 vehicles in a building of several levels: each level is a `mapId` (its name), the
vehicle's map is the level it is on, and an order whose nodes change map does so at a lift:
the last node on one map and the first on the next lie in the shaft of a lift serving both.

The ride is the lifts' service (`fleetsim.devices.lift_ride`); this is the vehicle's side. The
vehicle drives up to the node before the cabin (the lift's entry) and calls the lift only from
there; it drives into the cabin when the cabin is there with its doors open for it, boards,
and waits while carried; when the doors open on the next node's level it drives on, and the
service lets the lift go once the vehicle is out of the shaft. The master only sends the order:
like Open-RMF, VDA 5050 has no lift messages, so the vehicle's side does this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fleetsim.devices import LiftRides, Lifts
    from fleetsim.interfaces.vda5050.messages import Node, Order
    from fleetsim.site import Site
    from fleetsim.site.rmf_building import Lift


class Floors:
    """One vehicle's lift rides (none on a site of one level)."""

    def __init__(
        self, robot: Any, site: Site | None, position_of: Any, lifts: Lifts | None = None
    ) -> None:
        self.robot, self.site, self.position_of = robot, site, position_of
        self.lifts = lifts  # the simulation's (sim.lifts)
        several = site is not None and len(site.graph.level_names) > 1
        self.levels: list[str] = list(site.graph.level_names) if several and site else []
        self.requester = f"vda5050:{robot.name}"

    def map_of(self, default: str) -> str:
        """The vehicle's map: the level it is on, by its height (else `default`)."""
        if not self.levels or self.site is None:
            return default
        ride = self._ride()
        if ride is not None and ride.phase == "aboard":  # on the map it boarded on until there
            return str(ride.start)
        return self.site.level_at(float(self.robot.get_pose().position[2]))

    def cannot(self, order: Order, here: str) -> str | None:
        """Why the order's maps cannot be driven (None: they can)."""
        maps = [n.node_position.map_id if n.node_position else here for n in order.nodes]
        unknown = sorted({m for m in maps if m not in self.levels})
        if unknown:
            return f"maps {', '.join(unknown)}: the site's levels are {', '.join(self.levels)}"
        if maps and maps[0] != here:
            return f"the order starts on map {maps[0]!r}, the vehicle is on {here!r}"
        for a, b, ma, mb in zip(order.nodes, order.nodes[1:], maps, maps[1:], strict=False):
            if ma != mb and self.lift_between(a, ma, b, mb) is None:
                return (
                    f"nodes {a.node_id} ({ma}) and {b.node_id} ({mb}) change map outside a "
                    "lift serving both"
                )
        return None

    def lift_between(self, a: Node, ma: str, b: Node, mb: str) -> Lift | None:
        """The lift that serves both maps and stands at both nodes, or None."""
        if self.site is None or self.lifts is None:
            return None
        pa, pb = self.position_of(a), self.position_of(b)
        if pa is None or pb is None:
            return None
        for lift in self.site.lifts:
            if {ma, mb} <= set(lift.levels) and all(
                lift.contains(np.array([p[:2]]))[0] for p in (pa, pb)
            ):
                return lift
        return None

    def gate(self, base: list[Node], here: str) -> int | None:
        """How many of the `base` nodes (to drive next) may be driven now: up to the lift's
        entry (the node before the cabin), into the cabin once it is there for the vehicle
        (called from the entry only), none while riding, or None (all: no map change ahead)."""
        if not self.levels:
            return None
        maps = [n.node_position.map_id if n.node_position else here for n in base]
        before = [here, *maps]
        for k, node in enumerate(base):
            nxt = maps[k + 1] if k + 1 < len(base) else None
            if nxt is not None and nxt != maps[k]:  # node k is the cabin on this map
                lift = self.lift_between(node, maps[k], base[k + 1], nxt)
                assert lift is not None  # (checked when the order was taken)
                if k > 0:
                    return k  # to the entry first: the lift is called from there
                return 1 if self._called(lift.name, maps[k], nxt) else 0
            if maps[k] != before[k]:  # node k is the cabin on the next map: riding
                return 0
        return None

    def _called(self, lift: str, level: str, to: str) -> bool:
        """The lift is asked to `level` for this vehicle, to ride to `to`; there for it?"""
        rides = self._rides
        rides.call(self.requester, lift, level, to, self.robot)
        return bool(rides.may_enter(self.requester))

    @property
    def _rides(self) -> LiftRides:
        assert self.lifts is not None  # (a ride is asked for only on a site with lifts)
        return self.lifts.rides

    def _ride(self) -> Any:
        return self.lifts.rides.riding(self.requester) if self.lifts is not None else None

    def ride(self, base: list[Node], here: str) -> bool:
        """Standing in the cabin with the next node on another map: board; True once the
        cabin is there with its doors open (drive on), and whenever it is not riding."""
        ride = self._ride()
        if ride is None or not base or ride.phase == "arrived":
            return True
        if ride.phase == "called":
            target = base[0].node_position.map_id if base[0].node_position else here
            if target == here:
                return True  # the cabin is still ahead on this map
            if not self._rides.board(self.requester):
                return False
        return bool(self._rides.arrived(self.requester))

    def cancel(self) -> None:
        """The order is gone: a lift called for it is let go (not while aboard)."""
        if self.lifts is not None:
            self.lifts.rides.cancel(self.requester)
