"""What every protocol interface does the same way: `StepHooks` (apply what arrived at the start
of each step, report after it), `FaultView` (what the software under test sees of injected
faults) and `free_port` (a port for a server on 127.0.0.1)."""

from __future__ import annotations

import math
import socket
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore


class StepHooks:
    """`inbound()` on the simulation's `pre_step`, `outbound()` on its `post_step`, until
    `remove()`."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        inbound: Callable[[], None],
        outbound: Callable[[], None],
    ) -> None:
        self.sim = sim
        self._hooks = [
            ("pre_step", sim.on("pre_step", lambda *_: inbound())),
            ("post_step", sim.on("post_step", lambda *_: outbound())),
        ]

    def remove(self) -> None:
        """Stop calling the hooks."""
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._hooks = []


class FaultView:
    """Injected faults as the robots' software reports them (`fleetsim.faults`): a localisation
    jump moves a robot's reported position by `offsets[i]` while it lasts (the body does not
    move); `on_fault(name, row, started)` hears every fault of the robots `names` begin and end
    (a breakdown to report as an error, say). Kept from the simulation's `fault_started` and
    `fault_ended` events until `remove()`."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        names: Sequence[str],
        on_fault: Callable[[str, dict[str, Any], bool], None] | None = None,
    ) -> None:
        self.sim, self.on_fault = sim, on_fault
        self.index = {name: i for i, name in enumerate(names)}
        self.offsets = np.zeros((len(self.index), 2))
        self.any_offset = False
        started = sim.on("fault_started", lambda _s, row: self._seen(row, True))
        ended = sim.on("fault_ended", lambda _s, row: self._seen(row, False))
        self._hooks = [("fault_started", started), ("fault_ended", ended)]

    def _seen(self, row: dict[str, Any], started: bool) -> None:
        i = self.index.get(row["target"])
        if i is None:
            return
        if row["kind"] == "jump":
            d, a = (row.get("value", 0.0), row.get("angle", 0.0)) if started else (0.0, 0.0)
            self.offsets[i] = (d * math.cos(a), d * math.sin(a))
            self.any_offset = bool(self.offsets.any())
        if self.on_fault is not None:
            self.on_fault(row["target"], row, started)

    def remove(self) -> None:
        """Stop listening to the simulation's fault events."""
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._hooks = []


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, for a server on `host`."""
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
