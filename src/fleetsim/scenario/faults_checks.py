"""A `faults:` section checked against the run it is for, where the scenario is checked (load,
`fleetsim validate`, build), so that nothing a valid section asks for fails or hangs later:

- fault rates the run cannot simulate are refused with the estimate (as order rates are): more
  than `MAX_FAULTS_PER_S` faults a simulated second in all, or `MAX_FAULTS` in the run; a burst
  of more than `MAX_BURST` orders;
- set events carry amounts of their kind (a slow-down factor and a drain are fractions, a jump
  a distance, a delay whole steps) and name robots the run has;
- Gaussian delays' ratios lie in 0..1, and their shortest is not longer than their longest;
- network faults name vehicles the run has and topics (or endpoints) the interface has.

`FaultsCheckError` carries the key path under `faults` of what is wrong; the builder turns it
into the file, line and key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fleetsim.errors import ConfigError, closest
from fleetsim.faults.network import TOPICS
from fleetsim.faults.plan import ROBOT_KINDS
from fleetsim.scenario.faults_spec import FaultsSpec, MessageFaultsSpec

MAX_FAULTS_PER_S = 100.0  # faults a simulated second in all: more is a typo, not a test
MAX_FAULTS = 1_000_000  # faults in one run
MAX_BURST = 100_000  # orders in one burst


class FaultsCheckError(ConfigError):
    """A `faults:` section that cannot be right: `key` is the path under `faults`."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key, self.message = key, message


def check_faults(spec: FaultsSpec, robots: Sequence[str], duration: float | None) -> None:
    """Raise `FaultsCheckError` for the first thing in `spec` the run (robots by name, its
    duration in simulated seconds, None: until stopped) cannot do as asked."""
    names = set(robots)
    per_s = 0.0
    for k, process in enumerate(spec.robots):
        hit = len(process.robots) if process.robots is not None else len(names)
        rate = process.rate_per_hour * hit / 3600.0
        per_s += rate
        _refuse_rate(
            f"robots[{k}].rate_per_hour", process.rate_per_hour, hit, rate, per_s, duration, "robot"
        )
        for j, at in enumerate(process.at):
            _known(f"robots[{k}].at[{j}].robot", at.robot, names)
        for j, robot in enumerate(process.robots or []):
            _known(f"robots[{k}].robots[{j}]", robot, names)
    for k, site in enumerate(spec.site):
        per_s += site.rate_per_hour / 3600.0
        _refuse_rate(
            f"site[{k}].rate_per_hour",
            site.rate_per_hour,
            1,
            site.rate_per_hour / 3600,
            per_s,
            duration,
            "site",
        )
    for k, demand in enumerate(spec.demand):
        if demand.count > MAX_BURST:
            raise FaultsCheckError(
                f"demand[{k}].count",
                f"{demand.count:,} orders at once: at most {MAX_BURST:,} in one burst",
            )
    for k, event in enumerate(spec.events):
        _check_event(f"events[{k}]", event.kind, event.target, event.value, names)
    if spec.delays is not None:
        d = spec.delays
        if d.min_steps > d.max_steps:
            raise FaultsCheckError(
                "delays.min_steps", f"min_steps {d.min_steps} is more than max_steps {d.max_steps}"
            )
        for key, value in (("mean_ratio", d.mean_ratio), ("std_ratio", d.std_ratio)):
            if not 0 <= value <= 1:
                raise FaultsCheckError(
                    f"delays.{key}",
                    f"{key} {value:g} is a fraction of max - min: give a number in 0..1",
                )
    if spec.network is not None:
        for interface in ("vda5050", "rmf"):
            faults = getattr(spec.network, interface)
            if faults is not None:
                _check_network(f"network.{interface}", interface, faults, names)


def _refuse_rate(
    key: str,
    rate_per_hour: float,
    hit: int,
    rate_s: float,
    total_s: float,
    duration: float | None,
    what: str,
) -> None:
    """Refuse a rate that would make more faults than can be simulated, saying how many."""
    in_run = total_s * duration if duration is not None else 0.0
    if total_s <= MAX_FAULTS_PER_S and in_run <= MAX_FAULTS:
        return
    on = f" on each of {hit:,} robots" if what == "robot" else " on the site"
    run = f" ({in_run:,.0f} in the {duration:g} s run)" if duration is not None else ""
    raise FaultsCheckError(
        key,
        f"{rate_per_hour:g} faults an hour{on} is {rate_s:,.0f} a "
        f"simulated second{run}: at most {MAX_FAULTS_PER_S:g} a second and "
        f"{MAX_FAULTS:,} in a run can be simulated (a rate is per hour: did "
        "you mean a smaller one?)",
    )


def _check_event(key: str, kind: str, target: str, value: float, names: set[str]) -> None:
    if kind in ROBOT_KINDS or kind == "delay":
        _known(f"{key}.target", target, names)
    if kind in ("slowdown", "battery") and not 0 <= value <= 1:
        what = (
            "the fraction of its speed it keeps" if kind == "slowdown" else "a fraction of a charge"
        )
        raise FaultsCheckError(
            f"{key}.value", f"{kind} value {value:g} is {what}: give a number in 0..1"
        )
    if kind == "jump" and value < 0:
        raise FaultsCheckError(f"{key}.value", f"jump value {value:g}: a distance is >= 0 m")
    if kind in ("delay", "order_burst") and not (value >= 0 and float(value).is_integer()):
        what = "steps" if kind == "delay" else "orders"
        raise FaultsCheckError(
            f"{key}.value", f"{kind} value {value:g}: a whole number of {what} >= 0"
        )
    if not math.isfinite(value):
        raise FaultsCheckError(f"{key}.value", f"{kind} value {value!r} is not a number")


def _check_network(key: str, interface: str, faults: MessageFaultsSpec, names: set[str]) -> None:
    for j, vehicle in enumerate(faults.vehicles or []):
        _known(f"{key}.vehicles[{j}]", vehicle, names)
    known = TOPICS[interface]
    for j, topic in enumerate(faults.topics or []):
        if topic not in known:
            guess = closest(topic, list(known))
            hint = f"did you mean '{guess}'?" if guess else f"use {', '.join(known)}"
            what = "endpoint" if interface == "rmf" else "topic"
            raise FaultsCheckError(
                f"{key}.topics[{j}]", f"no {what} '{topic}' on {interface}: {hint}"
            )


def _known(key: str, robot: str, names: set[str]) -> None:
    if robot not in names:
        guess = closest(robot, sorted(names))
        hint = f"did you mean '{guess}'?" if guess else f"the run has {len(names)} robots"
        raise FaultsCheckError(key, f"no robot '{robot}' in the run: {hint}")
