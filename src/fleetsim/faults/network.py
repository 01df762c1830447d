"""Network faults on a protocol's messages: each message of a vehicle and topic may be dropped,
delayed, duplicated or held back to arrive after the next one (reordered), with the
probabilities of a `MessageFaults` configuration. Draws come from a generator per (vehicle,
topic), seeded from the configuration's seed and the two names, so the same messages meet the
same fate whatever else goes on.

`MessageFate.of(...)` says what happens to one message: the (simulated) times at which copies of
it are delivered, none when dropped. The interface (`fleetsim.interfaces.vda5050.fleet`) holds
delayed and reordered messages and delivers them when their time comes.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from fleetsim.errors import ConfigError

OUTCOMES = ("drop", "delay", "duplicate", "reorder")


# What network faults may name, per interface: VDA 5050 topics, Open-RMF API endpoints.
TOPICS: dict[str, tuple[str, ...]] = {
    "vda5050": ("order", "instantActions", "state", "visualization", "connection", "factsheet"),
    "rmf": (
        "status",
        "navigate",
        "action_paths",
        "start_activity",
        "toggle_teleop",
        "toggle_attach",
        "stop_robot",
        "door_states",
        "door_request",
        "lift_states",
        "lift_request",
        "root",
    ),
}


@dataclass(frozen=True)
class MessageFaults:
    """Probabilities (each 0..1, tried in this order) that a message is dropped, delayed (by
    `delay_s`, uniform between), duplicated, or reordered; for the `topics` named (None: every
    topic) of the `vehicles` named (None: all), in both directions unless `inbound` or
    `outbound` is off."""

    drop: float = 0.0
    delay: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    delay_s: tuple[float, float] = (0.5, 2.0)
    topics: tuple[str, ...] | None = None
    vehicles: tuple[str, ...] | None = None
    inbound: bool = True
    outbound: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        for name in OUTCOMES:
            p = getattr(self, name)
            if not (math.isfinite(p) and 0.0 <= p <= 1.0):
                raise ConfigError(f"network faults: {name} is a probability (0..1), got {p!r}")
        lo, hi = self.delay_s
        if not (0 <= lo <= hi and math.isfinite(hi)):
            raise ConfigError(f"network faults: delay_s must be [min, max] seconds, got {lo}, {hi}")

    @property
    def any(self) -> bool:
        """Whether any message can be hit."""
        return any(getattr(self, name) > 0 for name in OUTCOMES)

    def applies(self, vehicle: str, topic: str, inbound: bool) -> bool:
        """Whether messages of `vehicle` on `topic` (in that direction) can be hit."""
        return (
            (self.inbound if inbound else self.outbound)
            and (self.topics is None or topic in self.topics)
            and (self.vehicles is None or vehicle in self.vehicles)
        )


@dataclass
class MessageFate:
    """What happens to messages: `of` draws one message's fate; `counts` by outcome."""

    config: MessageFaults
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    _rngs: dict[tuple[str, str, bool], np.random.Generator] = field(default_factory=dict)

    def _rng(self, vehicle: str, topic: str, inbound: bool) -> np.random.Generator:
        key = (vehicle, topic, inbound)
        rng = self._rngs.get(key)
        if rng is None:
            words = [
                self.config.seed,
                zlib.crc32(vehicle.encode()),
                zlib.crc32(topic.encode()),
                int(inbound),
            ]
            rng = self._rngs[key] = np.random.default_rng(words)
        return rng

    def of(self, vehicle: str, topic: str, now: float, inbound: bool) -> tuple[str, list[float]]:
        """(outcome, delivery times) of one message sent at `now`: "ok" [now], "drop" [],
        "delay" [later], "duplicate" [now, now], "reorder" [] (the caller holds it until the
        next message of the same vehicle and topic has gone)."""
        c = self.config
        if not c.any or not c.applies(vehicle, topic, inbound):
            return "ok", [now]
        rng = self._rng(vehicle, topic, inbound)
        draw = float(rng.random())
        edge = 0.0
        for outcome in OUTCOMES:
            edge += getattr(c, outcome)
            if draw < edge:
                self.counts[outcome] += 1
                if outcome == "drop":
                    return outcome, []
                if outcome == "delay":
                    lo, hi = c.delay_s
                    return outcome, [now + float(rng.uniform(lo, hi))]
                if outcome == "duplicate":
                    return outcome, [now, now]
                return outcome, []
        return "ok", [now]
