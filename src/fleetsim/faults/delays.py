"""Execution delays in the style of the League of Robot Runners: at every tick each robot that
is not already delayed may be delayed, for a number of ticks drawn from a distribution, and a
delayed robot does not move. One implementation, used by the fault schedules and by the kit's
rules (`fleetsim.lorr`), so that the same seed gives the same delays as the kit.

Each `next_tick()`: every delay counts down by one tick; the robots with none left are
available; under the Bernoulli model each available robot (in index order) is delayed with
probability `p`, under the Poisson model k = min(Poisson(robots x p), available) robots are,
the first k of the available list after a shuffle (none, and no shuffle, when k is 0); each
gets a duration, uniform over [min, max] or a normal draw (mean min + span x mean_ratio,
standard deviation span x std_ratio) rounded half away from zero and clamped to [min, max]
(min == max: no draw). The interval [tick, tick + duration] is recorded, and the robot is
delayed for `duration` ticks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.faults.stdrandom import StdRandom, lround

EVENT_MODELS = ("bernoulli", "poisson")
DURATION_MODELS = ("uniform", "gaussian")
KIT_KEYS = {
    "seed": "seed",
    "pDelay": "p",
    "minDelay": "min_delay",
    "maxDelay": "max_delay",
    "eventModel": "event_model",
    "durationModel": "duration_model",
    "gaussMeanRatio": "mean_ratio",
    "gaussStdRatio": "std_ratio",
}


@dataclass(frozen=True)
class DelayConfig:
    """The kit's `delayConfig`: seed, the event model and its probability, the duration model
    and its bounds (ticks) and shape."""

    seed: int = 0
    p: float = 0.0
    min_delay: int = 1
    max_delay: int = 1
    event_model: Literal["bernoulli", "poisson"] = "bernoulli"
    duration_model: Literal["uniform", "gaussian"] = "uniform"
    mean_ratio: float = 0.5
    std_ratio: float = 0.22

    def __post_init__(self) -> None:
        if not (0.0 <= self.p <= 1.0 and math.isfinite(self.p)):
            raise ConfigError(f"delays: p is a probability (0..1), got {self.p!r}")
        if not 0 <= self.min_delay <= self.max_delay:
            raise ConfigError(
                f"delays: expected 0 <= min_delay <= max_delay ticks, got {self.min_delay} "
                f"and {self.max_delay}"
            )
        if self.event_model not in ("bernoulli", "poisson"):
            raise ConfigError(
                f"delays: event_model is bernoulli or poisson, not {self.event_model!r}"
            )
        if self.duration_model not in ("uniform", "gaussian"):
            raise ConfigError(
                f"delays: duration_model is uniform or gaussian, not {self.duration_model!r}"
            )

    @classmethod
    def from_kit(cls, config: dict[str, object], where: str = "delayConfig") -> DelayConfig:
        """From the kit's input JSON `delayConfig` (its key names), with the kit's own checks:
        a wrong or unknown value is a `ConfigError` naming the key (`where`: how to name the
        object, e.g. the file)."""
        unknown = sorted(set(config) - set(KIT_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KIT_KEYS)})")
        low, high = config.get("minDelay", 1), config.get("maxDelay", config.get("minDelay", 1))
        if not isinstance(low, int) or low <= 0:
            raise ConfigError(f"{where}.minDelay must be a whole number > 0, got {low!r}")
        if not isinstance(high, int) or high < low:
            raise ConfigError(f"{where}.maxDelay must be a whole number >= minDelay, got {high!r}")
        p = config.get("pDelay", 0.0)
        if not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
            raise ConfigError(f"{where}.pDelay must be in [0, 1], got {p!r}")
        for key, allowed in (("eventModel", EVENT_MODELS), ("durationModel", DURATION_MODELS)):
            if key in config and config[key] not in allowed:
                raise ConfigError(f"{where}.{key} {config[key]!r}: one of {', '.join(allowed)}")
        return cls(**{KIT_KEYS[k]: v for k, v in config.items()})  # type: ignore[arg-type]


@dataclass
class DelayGenerator:
    """Delays for `robots` robots, tick by tick (`next_tick`); `intervals[i]` lists robot i's
    delays as [start tick, end tick]."""

    config: DelayConfig
    robots: int
    tick: int = 0
    remaining: np.ndarray = field(init=False)  # (robots,) ticks of delay left
    intervals: list[list[tuple[int, int]]] = field(init=False)

    def __post_init__(self) -> None:
        self._rng = StdRandom(self.config.seed)
        self.remaining = np.zeros(self.robots, dtype=np.int64)
        self.intervals = [[] for _ in range(self.robots)]

    def delayed(self, i: int) -> bool:
        """Whether robot i is delayed at this tick."""
        return bool(self.remaining[i] > 0)

    def next_tick(self) -> list[int]:
        """Advance one tick; the robots that begin a delay at it. Array operations, but for the
        robots delayed (and the Poisson model's shuffle of the available ones)."""
        c, rng = self.config, self._rng
        remaining = self.remaining
        remaining -= remaining > 0
        available = np.flatnonzero(remaining == 0)
        if c.p <= 0.0 or not available.size:
            chosen: list[int] = []
        elif c.event_model == "bernoulli":  # (one canonical per available robot, in order)
            chosen = available[rng.canonicals(available.size) < c.p].tolist()
        else:
            k = min(rng.poisson(self.robots * c.p), available.size)
            chosen = []
            if k:  # (no shuffle, and no draws, when nobody is delayed)
                order = available.astype(np.int64)
                rng.shuffle_array(order)
                chosen = order[:k].tolist()
        for i in chosen:
            d = self._duration()
            self.intervals[i].append((self.tick, self.tick + d))
            remaining[i] = d
        self.tick += 1
        return chosen

    def _duration(self) -> int:
        c = self.config
        if c.min_delay == c.max_delay:
            return c.min_delay
        if c.duration_model == "uniform":
            return self._rng.uniform_int(c.min_delay, c.max_delay)
        span = c.max_delay - c.min_delay
        mean, sd = c.min_delay + span * c.mean_ratio, span * c.std_ratio
        x = mean if sd <= 0.0 else self._rng.normal(mean, sd)
        return max(c.min_delay, min(c.max_delay, lround(x)))
