"""The kinds of fault, one entry each: what a fault may touch, how its target is checked before
the run, what it does when it begins and what undoes it when it ends.

`FaultInjector` keeps only the machinery (when faults begin and end, their rows and events);
each kind acts through a method of what it touches: a robot's fault speed
(`Agent.set_fault_speed`), the doors and lifts (`Doors.stick`, `Lifts.set_in_service`), the
fleet manager's chargers (`Charging.set_down`, `Charging.spike`), lanes (`close_lane`) and task
book (`TaskBook.close_station`, `change_mix`, `add`). A kind of your own is registered with
`@fault_kind(name, touches=...)` on a `FaultKind` subclass, as scenario plugins are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.faults.blockage import LaneBlockage
from fleetsim.faults.plan import FaultEvent, mix_sides

if TYPE_CHECKING:
    from fleetsim.faults.inject import FaultInjector

SPEED = {"stop": 0.0, "breakdown": 0.0, "delay": 0.0}  # slowdown: its own factor


class FaultKind:
    """One kind of fault. `touches`: "robot", "site" or "demand"; `lasts`: False for a fault
    that is over as it happens (a battery spike, an order burst)."""

    name = ""
    touches = "robot"
    lasts = True

    def check(self, f: FaultInjector, target: str) -> None:
        """Refuse a target this run does not have (before the run), naming what it has."""

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        """The fault begins (`key`: this fault's own number)."""

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        """The fault's time is up: undo what `begin` did."""

    def targets(self, f: FaultInjector) -> list[str] | None:
        """What a random fault of this kind may hit in this run (None: not a site fault)."""
        return None


TABLE: dict[str, FaultKind] = {}
K = TypeVar("K", bound=type[FaultKind])


def fault_kind(name: str, touches: str, lasts: bool = True) -> Callable[[K], K]:
    """Register a `FaultKind` subclass as fault kind `name` (one class may be several kinds)."""

    def register(cls: K) -> K:
        kind = TABLE[name] = cls()
        kind.name, kind.touches, kind.lasts = name, touches, lasts
        return cls

    return register


# -- robots -------------------------------------------------------------------------------------


class _Robot(FaultKind):
    """A fault of one robot (its target: the robot's name, checked by the injector)."""


class _Speed(_Robot):
    """The robot held at a speed factor while the fault lasts (the smallest of its faults
    wins): 0 for a stop, a breakdown and a delay, the fault's own for a slow-down."""

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        i = f.index[event.target]
        f.speeds[i][key] = SPEED.get(self.name, event.value)
        f.apply_speed(i)
        f.broken[i] |= self.name == "breakdown"

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        i = f.index[event.target]
        f.speeds[i].pop(key, None)
        f.apply_speed(i)
        if self.name == "breakdown":
            f.broken[i] = f.going_on("breakdown", event.target)


for _name in ("stop", "breakdown", "delay", "slowdown"):
    fault_kind(_name, "robot")(_Speed)


@fault_kind("jump", "robot")
class _Jump(_Robot):
    """The robot's reported position jumps by `value` metres at `angle` (its body does not)."""

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        d, angle = event.value, event.angle
        f.reported_offset[f.index[event.target]] = (d * math.cos(angle), d * math.sin(angle))

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.reported_offset[f.index[event.target]] = 0.0


@fault_kind("battery", "robot", lasts=False)
class _Battery(_Robot):
    """The robot's battery loses `value` of its charge at once."""

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.fleet().charging.spike(f.index[event.target], event.value)


@fault_kind("disconnect", "robot")
class _Disconnect(_Robot):
    """The robot's link to its fleet software drops (the interfaces act on the event)."""


# -- the site -----------------------------------------------------------------------------------


@fault_kind("door_stuck", "site")
class _DoorStuck(FaultKind):
    """A door stuck open or closed."""

    def check(self, f: FaultInjector, target: str) -> None:
        doors = f.sim.doors
        _known(self.name, target, "door", doors.doors if doors is not None else {})

    def targets(self, f: FaultInjector) -> list[str] | None:
        return sorted(f.sim.doors.doors) if f.sim.doors is not None else None

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.sim.doors.stick(event.target, event.open)  # type: ignore[union-attr]

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.sim.doors.stick(event.target, None)  # type: ignore[union-attr]


@fault_kind("lift_out_of_service", "site")
class _LiftOut(FaultKind):
    """A lift out of service: nothing moves, requests wait."""

    def check(self, f: FaultInjector, target: str) -> None:
        lifts = f.sim.lifts
        _known(self.name, target, "lift", lifts.lifts if lifts else {})

    def targets(self, f: FaultInjector) -> list[str] | None:
        return sorted(f.sim.lifts.lifts) if f.sim.lifts is not None else None

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.sim.lifts.set_in_service(event.target, False)  # type: ignore[union-attr]

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.sim.lifts.set_in_service(event.target, True)  # type: ignore[union-attr]


@fault_kind("charger_down", "site")
class _ChargerDown(FaultKind):
    """A charger out of order: nobody is sent there, who charges there stops."""

    def check(self, f: FaultInjector, target: str) -> None:
        if f.manager is None or not f.manager.charging.on:
            raise ConfigError(f"charger_down {target}: needs a fleet manager with batteries")
        f.manager.graph.node(target)  # (an unknown node is an error)

    def targets(self, f: FaultInjector) -> list[str] | None:
        if f.manager is None:
            return None
        return [f.manager.graph.names[n] for n in f.manager.charging.chargers]

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        manager = f.fleet()
        manager.charging.set_down(manager.graph.node(event.target), True)

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        manager = f.fleet()
        manager.charging.set_down(manager.graph.node(event.target), False)


@fault_kind("lane_blocked", "site")
class _LaneBlocked(FaultKind):
    """A lane blocked: a box on it (`LaneBlockage`) and, with a fleet manager, the lane closed
    to its routes."""

    def check(self, f: FaultInjector, target: str) -> None:
        f.lane(target)

    def targets(self, f: FaultInjector) -> list[str] | None:
        if f.sim.site is None:
            return None
        g = f.sim.site.graph
        ends = zip(g.lane_from.tolist(), g.lane_to.tolist(), strict=True)
        return [
            f"{g.names[a]}->{g.names[b]}" for a, b in ends if g.level[a] == g.level[b]
        ]  # (lanes on one floor)

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        start, end = f.lane(event.target)
        assert f.sim.site is not None
        block = LaneBlockage(
            f.sim, f.sim.site.graph, start, end, f.robots, f"blocked {event.target}"
        )
        f.blocks[key] = block
        block.place()
        if f.manager is not None:
            f.manager.close_lane(start, end)

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.blocks.pop(key).remove()
        if f.manager is not None:
            f.manager.open_lane(*f.lane(event.target))


def _known(kind: str, target: str, what: str, names: Mapping[str, object]) -> None:
    if target not in names:
        known = ", ".join(sorted(names)) or "none"
        raise ConfigError(f"{kind}: the site has no {what} '{target}' ({what}s: {known})")


# -- demand -------------------------------------------------------------------------------------


class _Demand(FaultKind):
    def check(self, f: FaultInjector, target: str) -> None:
        graph = f.fleet(f"{self.name} faults need a fleet manager (its orders and stations)").graph
        if target:
            graph.node(target)  # (an unknown node is an error with the closest name)


@fault_kind("order_burst", "demand", lasts=False)
class _OrderBurst(_Demand):
    """`value` orders at once, from `target` (or random pick-ups) to random drop-offs."""

    def check(self, f: FaultInjector, target: str) -> None:
        super().check(f, target)
        graph = f.fleet().graph
        if not target and not (graph.nodes_with("pickup") and graph.nodes_with("dropoff")):
            raise ConfigError("order_burst: the site has no pickup and dropoff nodes")

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.fleet().book.add(f.burst(event, key), event.time)


@fault_kind("station_closed", "demand")
class _StationClosed(_Demand):
    """A station closed: orders through it wait."""

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.fleet().book.close_station(event.target)

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.fleet().book.reopen_station(event.target)


@fault_kind("order_mix", "demand")
class _OrderMix(_Demand):
    """Orders released while it lasts go between other stations (`target`: "a,b>c,d")."""

    def check(self, f: FaultInjector, target: str) -> None:
        graph = f.fleet(f"{self.name} faults need a fleet manager (its orders and stations)").graph
        for node in (n for side in mix_sides(target) for n in side):
            graph.node(node)  # (an unknown node is an error with the closest name)

    def begin(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        pickups, dropoffs = mix_sides(event.target)
        f.fleet().book.change_mix(
            key, pickups, dropoffs, np.random.default_rng([f.plan.seed, 7927, key])
        )

    def end(self, f: FaultInjector, key: int, event: FaultEvent) -> None:
        f.fleet().book.restore_mix(key)
