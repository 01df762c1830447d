"""`DelayGenerator`: the LoRR start kit's execution delays, tick by tick, with the kit's random
numbers (`fleetsim.lorr.kit_random`), so that the same `delayConfig` gives the kit's
`delayIntervals`.

Each tick (`next_tick`): the delays running count down by one; the robots with none running
are the available ones; a Bernoulli model delays each available robot with probability
`pDelay` (one draw each, in robot order), a Poisson model draws how many (mean `pDelay` times
the team's size, at most the available ones) and takes them from the front of the available
list shuffled; then each robot taken, in that order, draws how long (`minDelay` when it equals
`maxDelay`, else uniform over [min, max], or Gaussian about min + span * `gaussMeanRatio` with
deviation span * `gaussStdRatio`, rounded half away from zero and clamped). A robot delayed at
tick t for d ticks is recorded as [t, t + d] and waits d ticks. The tick counted is the
generator's own (the kit calls it once a recorded tick).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.lorr import kit_random as kr

EVENT_MODELS = ("bernoulli", "poisson")
POISSON_MEAN_LIMIT = 12  # the C++ library draws larger means another way, not yet here
DURATION_MODELS = ("uniform", "gaussian")


@dataclass(frozen=True)
class DelayConfig:
    """The kit input's `delayConfig`."""

    seed: int = 0
    min_delay: int = 1
    max_delay: int = 1
    event_model: str = "bernoulli"
    p_delay: float = 0.0
    duration_model: str = "uniform"
    gauss_mean_ratio: float = 0.5
    gauss_std_ratio: float = 0.0

    @classmethod
    def from_json(cls, raw: dict[str, Any], where: str = "delayConfig") -> DelayConfig:
        """From the kit's JSON object (its key names); a missing or wrong value is a
        `ConfigError` naming the key."""
        names = {"seed": "seed", "minDelay": "min_delay", "maxDelay": "max_delay",
                 "eventModel": "event_model", "pDelay": "p_delay",
                 "durationModel": "duration_model", "gaussMeanRatio": "gauss_mean_ratio",
                 "gaussStdRatio": "gauss_std_ratio"}  # fmt: skip
        unknown = sorted(set(raw) - set(names))
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(names)})")
        values: dict[str, Any] = {}
        for key, name in names.items():
            if key in raw:
                values[name] = raw[key]
        config = cls(**values)
        config.check(where)
        return config

    def check(self, where: str = "delayConfig") -> None:
        """The kit's own checks, as `ConfigError`s naming the key."""
        if self.min_delay <= 0:
            raise ConfigError(f"{where}.minDelay must be > 0, got {self.min_delay}")
        if self.max_delay < self.min_delay:
            raise ConfigError(f"{where}.maxDelay must be >= minDelay, got {self.max_delay}")
        if not 0.0 <= self.p_delay <= 1.0:
            raise ConfigError(f"{where}.pDelay must be in [0, 1], got {self.p_delay}")
        if self.event_model not in EVENT_MODELS:
            raise ConfigError(f"{where}.eventModel {self.event_model!r}: one of {EVENT_MODELS}")
        if self.duration_model not in DURATION_MODELS:
            raise ConfigError(
                f"{where}.durationModel {self.duration_model!r}: one of {DURATION_MODELS}"
            )
        if self.duration_model == "gaussian" and not (
            0.0 <= self.gauss_mean_ratio <= 1.0 and self.gauss_std_ratio >= 0.0
        ):
            raise ConfigError(
                f"{where}: gaussMeanRatio must be in [0, 1] and gaussStdRatio >= 0 for "
                f"gaussian, got {self.gauss_mean_ratio} and {self.gauss_std_ratio}"
            )


class DelayGenerator:
    """The delays of `robots` robots under `config`, one `next_tick` a tick."""

    def __init__(self, config: DelayConfig, robots: int) -> None:
        config.check()
        if config.event_model == "poisson" and robots * config.p_delay >= POISSON_MEAN_LIMIT:
            raise ConfigError(
                f"delayConfig: pDelay {config.p_delay} with {robots} robots is a Poisson mean of "
                f"{robots * config.p_delay:g}: fleetsim draws the kit's Poisson events only for "
                f"means below {POISSON_MEAN_LIMIT} so far (lower pDelay, or use eventModel "
                "bernoulli)"
            )
        self.config = config
        self.robots = robots
        self.remaining = [0] * robots
        self.intervals: list[list[tuple[int, int]]] = [[] for _ in range(robots)]
        self.tick = 0
        self._rng = kr.MT19937(config.seed)

    def next_tick(self) -> list[tuple[int, int]]:
        """Advance one tick: (robot, ticks) of the delays that start now."""
        remaining = self.remaining
        for robot in range(self.robots):
            if remaining[robot] > 0:
                remaining[robot] -= 1
        available = [robot for robot in range(self.robots) if remaining[robot] == 0]
        started = []
        for robot in self._chosen(available):
            ticks = self._duration()
            remaining[robot] = ticks
            self.intervals[robot].append((self.tick, self.tick + ticks))
            started.append((robot, ticks))
        self.tick += 1
        return started

    def delayed(self) -> list[bool]:
        """Which robots wait this tick (a delay running)."""
        return [ticks > 0 for ticks in self.remaining]

    def _chosen(self, available: list[int]) -> list[int]:
        c, g = self.config, self._rng
        if not available:
            return []
        if c.event_model == "bernoulli":
            return [robot for robot in available if kr.bernoulli(g, c.p_delay)]
        count = min(kr.poisson(g, self.robots * c.p_delay), len(available))
        if count <= 0:
            return []
        order = list(available)
        kr.shuffle(g, order)
        return order[:count]

    def _duration(self) -> int:
        c = self.config
        if c.min_delay == c.max_delay:
            return c.min_delay
        if c.duration_model == "uniform":
            return kr.uniform_int(self._rng, c.min_delay, c.max_delay)
        span = float(c.max_delay - c.min_delay)
        mean = float(c.min_delay) + span * c.gauss_mean_ratio
        deviation = span * c.gauss_std_ratio
        drawn = mean if deviation <= 0.0 else kr.normal(self._rng, mean, deviation)
        return min(max(lround(drawn), c.min_delay), c.max_delay)


def lround(x: float) -> int:
    """C's `lround`: to the nearest whole number, halves away from zero."""
    whole = math.floor(abs(x))
    up = abs(x) - whole >= 0.5
    return int(math.copysign(whole + up, x))
