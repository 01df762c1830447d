"""Batteries: each robot's state of charge (0..1 of a full charge) as an array, drained by
distance driven and by time (busy or idle), charged at charger nodes. Off unless configured."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fleetsim.errors import ConfigError


@dataclass(frozen=True)
class BatteryParams:
    """Rates are fractions of a full charge. The defaults: about 4 km or 3 hours of work on a
    charge, full again in about 40 minutes; robots go to charge below 20% and leave at 90%."""

    initial: float = 1.0
    drain_per_m: float = 0.00015
    drain_per_s: float = 0.00003  # busy (moving, waiting, working)
    drain_idle_per_s: float = 0.00001
    charge_per_s: float = 0.0004
    low: float = 0.2  # go and charge when free and below this
    resume: float = 0.9  # charged enough to work again

    def __post_init__(self) -> None:
        for name in ("drain_per_m", "drain_per_s", "drain_idle_per_s", "charge_per_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"battery {name} must be >= 0, got {value!r}")
        for name in ("initial", "low", "resume"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0 <= value <= 1):
                raise ConfigError(f"battery {name} is a fraction of a charge (0..1), got {value!r}")
        if not self.low < self.resume:
            raise ConfigError(f"battery low ({self.low}) must be below resume ({self.resume})")
        if self.charge_per_s <= 0:
            raise ConfigError("battery charge_per_s must be > 0 (robots could never recharge)")


class Batteries:
    """State of charge per robot, shape (R,)."""

    def __init__(self, params: BatteryParams, robots: int) -> None:
        self.params = params
        self.soc = np.full(robots, params.initial)
        self.charging = np.zeros(robots, dtype=bool)

    def update(self, dt: float, driven: np.ndarray, busy: np.ndarray) -> np.ndarray:
        """Drain by `driven` metres (R,) and `dt` seconds (busy or idle), charge the robots on
        chargers; returns which robots just ran empty."""
        p = self.params
        was = self.soc > 0
        rate = np.where(busy, p.drain_per_s, p.drain_idle_per_s)
        use = p.drain_per_m * driven + rate * dt
        gain = np.where(self.charging, p.charge_per_s * dt, 0.0)
        self.soc = np.clip(self.soc - np.where(self.charging, 0.0, use) + gain, 0.0, 1.0)
        empty: np.ndarray = was & (self.soc <= 0)
        return empty

    @property
    def percent(self) -> np.ndarray:
        """State of charge in percent, (R,)."""
        return self.soc * 100.0
