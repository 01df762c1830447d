"""A scenario's `faults:` section: what goes wrong on purpose, as seeded processes and fixed
faults. `plan_of` turns it into a `fleetsim.faults.FaultPlan`; the builder applies it with a
`FaultInjector` (see docs/guides/faults.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from fleetsim.faults import (
    DelayConfig,
    DemandFault,
    FaultEvent,
    FaultPlan,
    RobotFaults,
    SiteFault,
    SiteFaults,
)
from fleetsim.faults.network import MessageFaults
from fleetsim.scenario.spec_base import Finite, NonNegative, Spec

Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Duration = NonNegative | tuple[NonNegative, NonNegative]


class AtSpec(Spec):
    """A fault at a set time on one robot."""

    robot: str
    """The robot's name."""
    time: NonNegative
    """Simulated seconds."""


class RobotFaultSpec(Spec):
    """A kind of robot fault, at a rate per robot-hour and/or at set times."""

    type: Literal["stop", "slowdown", "breakdown", "jump", "battery", "disconnect"]
    """stop (for a while), slowdown (to `factor`), breakdown (stopped until repaired: the
    duration), jump (the reported pose off by `distance`, the body not), battery (a drain
    spike of `drain`), disconnect (a VDA 5050 vehicle's session cut: its last will, then back
    when it ends)."""
    rate_per_hour: NonNegative = 0.0
    """Faults per robot per simulated hour (a Poisson process per robot)."""
    at: list[AtSpec] = Field(default_factory=list)
    """Faults at set times: [{robot, time}, ...]."""
    duration: Duration = 30.0
    """Seconds it lasts, or [min, max] (uniform between)."""
    factor: Fraction = 0.5
    """slowdown: the fraction of its speed a robot keeps."""
    distance: NonNegative = 1.0
    """jump: metres the reported pose is off, in a random direction."""
    drain: Fraction = 0.1
    """battery: the fraction of a full charge lost at once."""
    robots: list[str] | None = None
    """Only these robots (by name); default every robot."""


class SiteFaultSpec(Spec):
    """A fault of the site at a set time, or at random (`rate_per_hour`)."""

    type: Literal["door_stuck", "lift_out_of_service", "charger_down", "lane_blocked"]
    """door_stuck (a door that neither opens nor closes: `open` says how it is stuck),
    lift_out_of_service, charger_down (needs a fleet manager with batteries), lane_blocked
    (a box on the lane, which is closed to the fleet manager's routes)."""
    target: str | None = None
    """The door's or lift's name, the charger's node, or the lane as 'from->to'."""
    at: NonNegative = 0.0
    """When it begins, simulated seconds."""
    duration: Duration = 60.0
    """How long it lasts, seconds (or [min, max] for faults at random)."""
    rate_per_hour: NonNegative = 0.0
    """Instead of `target` and `at`: faults an hour on the site as a whole, each on a target
    drawn from `targets` (default: every one of its kind the site has)."""
    targets: list[str] | None = None
    """Faults at random: what they may hit (lanes as 'from->to', doors, lifts, chargers)."""

    @model_validator(mode="after")
    def _one_or_random(self) -> SiteFaultSpec:
        if self.rate_per_hour == 0:
            if self.target is None:
                raise ValueError("name the target, or give rate_per_hour for faults at random")
            if isinstance(self.duration, tuple):
                raise ValueError("a fault at a set time lasts one duration (seconds)")
        elif self.target is not None:
            raise ValueError("target is for a fault at a set time; at random, list `targets`")
        return self

    open: bool = False
    """door_stuck: stuck open (true) or closed (false)."""


class DemandFaultSpec(Spec):
    """A change of demand at a set time (needs a fleet manager)."""

    type: Literal["order_burst", "station_closed", "order_mix"]
    """order_burst (`count` orders at once), station_closed (no order through the station is
    handed out while it lasts), order_mix (the orders released while it lasts are picked up at
    `pickups` and dropped off at `dropoffs` instead)."""
    at: NonNegative = 0.0
    """When, simulated seconds."""
    target: str = ""
    """order_burst: the pick-up node (default: random pick-up stations); station_closed: the
    station's node."""
    count: Annotated[int, Field(ge=0)] = 10
    """order_burst: how many orders."""
    duration: NonNegative = 60.0
    """station_closed, order_mix: how long, seconds."""
    pickups: list[str] | None = None
    """order_mix: the pick-up nodes orders come from meanwhile (default: as they were)."""
    dropoffs: list[str] | None = None
    """order_mix: the drop-off nodes orders go to meanwhile (default: as they were)."""

    @model_validator(mode="after")
    def _mix(self) -> DemandFaultSpec:
        if self.type == "order_mix":
            if not (self.pickups or self.dropoffs):
                raise ValueError("order_mix: give pickups, dropoffs or both (node names)")
            self.target = ",".join(self.pickups or ()) + "->" + ",".join(self.dropoffs or ())
        elif self.pickups is not None or self.dropoffs is not None:
            raise ValueError(f"{self.type} takes no pickups or dropoffs (order_mix does)")
        return self


class DelaySpec(Spec):
    """Execution delays as the League of Robot Runners draws them, a tick being a step."""

    p: Fraction
    """The probability of a delay per robot and step (Bernoulli), or p x robots delays a step
    on average (Poisson)."""
    min_steps: Annotated[int, Field(ge=0)] = 1
    """The shortest delay, in steps."""
    max_steps: Annotated[int, Field(ge=0)] = 1
    """The longest delay, in steps."""
    event_model: Literal["bernoulli", "poisson"] = "bernoulli"
    """How delays begin."""
    duration_model: Literal["uniform", "gaussian"] = "uniform"
    """How long they last, between min_steps and max_steps."""
    mean_ratio: Finite = 0.5
    """gaussian: the mean's place between min and max (0..1)."""
    std_ratio: Finite = 0.22
    """gaussian: the standard deviation, as a fraction of max - min."""


class FaultEventSpec(Spec):
    """One fault at a set time (what `schedule_rows` writes out: the faults that happened)."""

    time: NonNegative
    """When it begins, simulated seconds."""
    kind: Literal[
        "stop",
        "slowdown",
        "breakdown",
        "jump",
        "battery",
        "disconnect",
        "delay",
        "door_stuck",
        "lift_out_of_service",
        "charger_down",
        "lane_blocked",
        "order_burst",
        "station_closed",
        "order_mix",
    ]
    """The kind of fault."""
    target: str
    """A robot's name, a door's or lift's name, a charger's node, or a lane ('from->to')."""
    duration: NonNegative = 0.0
    """How long it lasts, seconds."""
    value: Finite = 0.0
    """The factor (slowdown), distance (jump), drain (battery) or steps (delay)."""
    angle: Finite = 0.0
    """jump: the direction of the offset, radians."""
    open: bool = False
    """door_stuck: stuck open (true) or closed (false)."""


class MessageFaultsSpec(Spec):
    """Network faults on a protocol's messages, each tried in turn per message."""

    drop: Fraction = 0.0
    """The probability that a message is lost."""
    delay: Fraction = 0.0
    """The probability that a message is delayed by `delay_s`."""
    duplicate: Fraction = 0.0
    """The probability that a message arrives twice."""
    reorder: Fraction = 0.0
    """The probability that a message arrives after the next one (of its vehicle and topic)."""
    delay_s: Duration = (0.5, 2.0)
    """Seconds a delayed message is late, or [min, max]."""
    topics: list[str] | None = None
    """Only these topics (order, instantActions, state, visualization, ...); default all."""
    vehicles: list[str] | None = None
    """Only these vehicles (robot names); default all."""
    inbound: bool = True
    """Messages to the vehicles (orders, instant actions)."""
    outbound: bool = True
    """Messages from the vehicles (states, visualizations)."""


class NetworkSpec(Spec):
    """Network faults, per interface."""

    vda5050: MessageFaultsSpec | None = None
    """On the VDA 5050 vehicles' MQTT messages (`fleetsim vda5050`)."""
    rmf: MessageFaultsSpec | None = None
    """On the Open-RMF API's answers (`fleetsim rmf`): `drop` refuses an answer (HTTP 503),
    `delay` delays it (wall seconds); `topics` are endpoints (status, navigate, ...)."""


class FaultsSpec(Spec):
    """What goes wrong on purpose; the same scenario and seed give the same faults."""

    seed: Annotated[int, Field(ge=0, lt=2**32)] | None = None
    """The faults' own seed (default: the simulation's seed, else 0)."""
    robots: list[RobotFaultSpec] = Field(default_factory=list)
    """Robot faults."""
    site: list[SiteFaultSpec] = Field(default_factory=list)
    """Site faults: doors, lifts, chargers, lanes."""
    demand: list[DemandFaultSpec] = Field(default_factory=list)
    """Demand faults: order bursts, stations closing."""
    delays: DelaySpec | None = None
    """Execution delays, step by step."""
    events: list[FaultEventSpec] = Field(default_factory=list)
    """Faults at set times, written out (a run to reproduce)."""
    network: NetworkSpec | None = None
    """Network faults on the interfaces' messages."""


def plan_of(spec: FaultsSpec, seed: int) -> FaultPlan:
    """The `FaultPlan` of a `faults:` section (`seed` when the section gives none)."""
    robots = tuple(
        RobotFaults(
            r.type,
            r.rate_per_hour,
            tuple((a.robot, a.time) for a in r.at),
            r.duration if isinstance(r.duration, tuple) else (r.duration, r.duration),
            r.factor,
            r.distance,
            r.drain,
            tuple(r.robots) if r.robots is not None else None,
        )
        for r in spec.robots
    )
    site = tuple(
        SiteFault(s.type, s.target or "", s.at, _span(s.duration)[0], s.open)
        for s in spec.site
        if s.rate_per_hour == 0
    )
    site_random = tuple(
        SiteFaults(
            s.type,
            s.rate_per_hour,
            _span(s.duration),
            tuple(s.targets) if s.targets is not None else None,
            s.open,
        )
        for s in spec.site
        if s.rate_per_hour > 0
    )
    events = tuple(
        FaultEvent(e.time, e.kind, e.target, e.duration, e.value, e.angle, e.open)
        for e in spec.events
    )
    demand = tuple(DemandFault(d.type, d.at, d.target, d.duration, d.count) for d in spec.demand)
    return FaultPlan(
        robots, site, events, spec.seed if spec.seed is not None else seed, demand, site_random
    )


def _span(duration: float | tuple[float, float]) -> tuple[float, float]:
    return duration if isinstance(duration, tuple) else (duration, duration)


def network_faults_of(
    spec: FaultsSpec | None, seed: int, interface: str = "vda5050"
) -> MessageFaults | None:
    """The message faults of a `faults:` section for `interface` (vda5050, rmf), or None."""
    network = spec.network if spec is not None else None
    n = getattr(network, interface) if network is not None else None
    if n is None:
        return None
    delay = n.delay_s if isinstance(n.delay_s, tuple) else (n.delay_s, n.delay_s)
    return MessageFaults(
        n.drop,
        n.delay,
        n.duplicate,
        n.reorder,
        delay,
        tuple(n.topics) if n.topics is not None else None,
        tuple(n.vehicles) if n.vehicles is not None else None,
        n.inbound,
        n.outbound,
        spec.seed if spec.seed is not None else seed,  # type: ignore[union-attr]
    )


def delays_of(spec: FaultsSpec, seed: int) -> DelayConfig | None:
    """The delay configuration of a `faults:` section, or None."""
    d = spec.delays
    if d is None:
        return None
    return DelayConfig(
        spec.seed if spec.seed is not None else seed,
        d.p,
        d.min_steps,
        d.max_steps,
        d.event_model,
        d.duration_model,
        d.mean_ratio,
        d.std_ratio,
    )
