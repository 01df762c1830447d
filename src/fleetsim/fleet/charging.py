"""`Charging`: a fleet's batteries and chargers. Robots below the low mark that have nothing to
do drive to the nearest charger nobody holds or is bound for, charge there and are free again
at the resume mark; one that runs empty stops where it is. Off (no batteries) unless the fleet
manager is given `BatteryParams`."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.fleet.traffic import TrafficControl


class Charging:
    """`batteries` (None when off), `bound` (R,): the charger node each robot is bound for or
    charging at (-1: none), `sessions`: charging sessions begun."""

    def __init__(
        self, params: BatteryParams | None, traffic: TrafficControl, names: list[str]
    ) -> None:
        self.traffic = traffic
        self.graph = traffic.graph
        r = len(names)
        self.batteries = Batteries(params, r) if params is not None else None
        self.bound = np.full(r, -1, dtype=np.int64)
        self.sessions = 0
        self.chargers: list[int] = []
        self.down: set[int] = set()  # chargers out of order (a fault): nobody is sent there
        if self.batteries is not None:
            self._check_chargers(names)

    @property
    def on(self) -> bool:
        """Whether the robots have batteries."""
        return self.batteries is not None

    def _check_chargers(self, names: list[str]) -> None:
        """Every robot must reach a charger from where it starts."""
        chargers = [self.graph.node(n) for n in self.graph.nodes_with("charger")]
        if not chargers:
            raise ConfigError("batteries need chargers: flag nodes with charger: true")
        for i, name in enumerate(names):
            here = self.traffic.node_of(i)
            if not any(self._reachable(here, c) for c in chargers):
                raise ConfigError(
                    f"{name} (at node '{self.graph.names[here]}') has no route to a charger"
                )
        self.chargers = chargers

    def _reachable(self, a: int, b: int) -> bool:
        try:
            self.graph.route(a, b)
        except FleetSimError:
            return False
        return True

    def low(self) -> np.ndarray:
        """Which robots are below the mark at which they stop taking work, (R,) bool."""
        if self.batteries is None:
            return np.zeros(len(self.bound), dtype=bool)
        low: np.ndarray = self.batteries.soc < self.batteries.params.low
        return low

    def arrived(self, i: int) -> None:
        """Robot i reached the node it was sent to: a charger it was bound for, it charges."""
        if self.bound[i] >= 0 and self.batteries is not None:
            self.batteries.charging[i] = True
            self.sessions += 1

    def spike(self, i: int, amount: float) -> None:
        """Robot i's battery loses `amount` of its charge at once (a fault), down to empty."""
        if self.batteries is not None:
            self.batteries.soc[i] = max(0.0, self.batteries.soc[i] - amount)

    def set_down(self, charger: int, down: bool) -> None:
        """The charger at node `charger` is out of order (robots charging there stop and look
        for another) or works again."""
        if down:
            self.down.add(charger)
            if self.batteries is not None:
                for i in np.flatnonzero(self.bound == charger).tolist():
                    self.batteries.charging[i] = False
                    self.bound[i] = -1
        else:
            self.down.discard(charger)

    def rounds(self, idle: np.ndarray, failed: np.ndarray) -> None:
        """Robots charged to the resume mark are free again; idle robots (R,) bool below the
        low mark that are not yet bound for a charger go to one."""
        b = self.batteries
        if b is None:
            return
        for i in np.flatnonzero(b.charging & (b.soc >= b.params.resume)).tolist():
            b.charging[i] = False
            self.bound[i] = -1  # charged: free for work again
        for i in np.flatnonzero(idle & (b.soc < b.params.low) & (self.bound < 0) & ~failed):
            self._send(int(i))

    def _send(self, i: int) -> None:
        """To the nearest charger no other robot holds or is bound for."""
        claimed = set(self.bound[self.bound >= 0].tolist())
        here = self.traffic.positions()[i]
        t = self.traffic
        free = [
            c
            for c in self.chargers
            if c not in claimed and c not in self.down and t.is_free_for(i, c)
        ]
        free.sort(key=lambda c: float(np.hypot(*(self.graph.xy[c] - here))))
        for charger in free:
            try:
                t.send(i, charger)
            except FleetSimError:
                continue
            self.bound[i] = charger
            return

    def drain(self, dt: float, driven: np.ndarray, busy: np.ndarray) -> list[int]:
        """Use and charge the batteries for a step; the robots that just ran empty."""
        if self.batteries is None:
            return []
        empty: list[int] = self.batteries.update(dt, driven, busy).nonzero()[0].tolist()
        return empty

    def kpis(self, failed: np.ndarray) -> dict[str, Any] | None:
        """Lowest and mean charge, sessions begun and robots that ran empty (None when off)."""
        b = self.batteries
        if b is None:
            return None
        return {
            "soc_min": float(b.soc.min()) if b.soc.size else None,
            "soc_mean": float(b.soc.mean()) if b.soc.size else None,
            "charging_sessions": self.sessions,
            "ran_empty": int(failed.sum()),
        }
