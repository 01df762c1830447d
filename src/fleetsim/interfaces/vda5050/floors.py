"""VDA 5050 vehicles in a building of several levels: each level is a `mapId` (its name), the
vehicle's map is the level it is on, and an order whose nodes change map does so at a lift:
the last node on one map and the first on the next lie in the shaft of a lift serving both.

The vehicle drives up to the node before the cabin and calls the lift to its level; it drives
into the cabin only when the cabin is there with its doors open for it, boards, sends the lift
to the next node's level and waits while carried; when the doors open there it drives on, and
lets the lift go once out of the shaft. The master only sends the order: like Open-RMF, VDA
5050 has no lift messages, so the vehicle's side does this.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fleetsim.interfaces.vda5050.messages import Node, Order
    from fleetsim.site import Site
    from fleetsim.site.rmf_building import Lift

CLEAR_M = 0.3  # out of the shaft by the robot's size and this: the lift is let go


class Floors:
    """One vehicle's lift rides (none on a site of one level)."""

    def __init__(self, robot: Any, site: Site | None, position_of: Any) -> None:
        self.robot, self.site, self.position_of = robot, site, position_of
        self.lifts: Any = getattr(robot.world, "lifts", None)
        several = site is not None and len(site.graph.level_names) > 1
        self.levels: list[str] = list(site.graph.level_names) if several and site else []
        self.requester = f"vda5050:{robot.name}"
        self.riding: str | None = None  # the lift it has a session with
        self._exit: tuple[float, float] | None = None  # the cabin's place, to leave it
        self._from: str | None = None  # the level it boarded on, while carried

    def map_of(self, default: str) -> str:
        """The vehicle's map: the level it is on, by its height (else `default`)."""
        if not self.levels or self.site is None:
            return default
        if self._from is not None:  # carried: on the map it boarded on until it gets there
            return self._from
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
                return (f"nodes {a.node_id} ({ma}) and {b.node_id} ({mb}) change map outside a "
                        "lift serving both")  # fmt: skip
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
        """How many of the `base` nodes (to drive next) may be driven now: up to the node
        before a cabin that is not there for it yet, up to the cabin when it is, or None
        (all: no map change ahead)."""
        if not self.levels:
            return None
        maps = [n.node_position.map_id if n.node_position else here for n in base]
        before = [here, *maps]
        for k, node in enumerate(base):
            nxt = maps[k + 1] if k + 1 < len(base) else None
            if nxt is not None and nxt != maps[k]:  # node k is the cabin on this map
                lift = self.lift_between(node, maps[k], base[k + 1], nxt)
                assert lift is not None  # (checked when the order was taken)
                return k + 1 if self._called(lift.name, maps[k]) else k
            if maps[k] != before[k]:  # node k is the cabin on the next map: riding
                return 0
        return None

    def _called(self, lift: str, level: str) -> bool:
        """The lift is asked to `level` for this vehicle; there with its doors open?"""
        self.lifts.request(lift, self.requester, level)
        self.riding = lift
        return bool(self.lifts[lift].ready(level, self.requester))

    def ride(self, base: list[Node], here: str) -> bool:
        """Standing in the cabin with the next node on another map: board, send the lift
        there; True once it has arrived with its doors open (drive on)."""
        if self.riding is None or not base:
            return True
        target = base[0].node_position.map_id if base[0].node_position else here
        if target == here and self.robot.name not in {r.name for r in self._aboard()}:
            return True
        device = self.lifts[self.riding]
        boarded = self.requester in device.aboard or (
            not self.robot.is_moving and self.lifts.board(self.riding, self.requester, self.robot)
        )
        if not boarded:
            return False
        if self._from is None:
            self._from = here
        self.lifts.request(self.riding, self.requester, target)
        if not device.ready(target, self.requester):
            return False
        self.lifts.alight(self.riding, self.requester)
        self._from = None
        x, y = self.robot.get_pose().position[:2]
        self._exit = (float(x), float(y))
        return True

    def _aboard(self) -> list[Any]:
        return list(self.lifts[self.riding].aboard.values()) if self.riding else []

    def let_go(self) -> None:
        """Once out of the shaft after a ride, the lift is let go."""
        if self.riding is None or self._exit is None:
            return
        x, y = self.robot.get_pose().position[:2]
        spec = next(lift for lift in self.site.lifts if lift.name == self.riding)  # type: ignore[union-attr]
        reach = max(spec.width, spec.depth) / 2 + 0.5 + CLEAR_M
        if math.hypot(x - self._exit[0], y - self._exit[1]) > reach:
            self.lifts.release(self.riding, self.requester)
            self.riding, self._exit = None, None
