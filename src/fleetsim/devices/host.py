"""`DeviceHost`: what the site's devices need of the simulation they run in.

Doors and lifts are a layer below the simulation core: they name what they use of it here (its
clock and timestep, its event bus, its world and a step callback), and the core is one such
host, without the devices importing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from fleetsim.events import EventBus
from fleetsim.objects import World


class DeviceHost(Protocol):
    """The simulation a device runs in (a `MultiRobotSimulationCore`)."""

    @property
    def world(self) -> World:
        """Its bodies and their tables."""

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the start."""

    @property
    def params(self) -> Any:
        """Its `SimulationParams` (the devices read `timestep`)."""

    @property
    def events(self) -> EventBus:
        """Its event bus (`door_changed`, `lift_changed`)."""

    def register_callback(
        self,
        callback: Callable[[Any, float], Any],
        frequency: float | None = None,
        owner: object = None,
    ) -> int:
        """Call `callback(sim, dt)` every step."""

    def handles_of(self, objects: Any) -> NDArray[np.int64]:
        """The body handles of `objects`."""
