"""What every protocol interface does the same way: `StepHooks` (apply what arrived at the start
of each step, report after it) and `free_port` (a port for a server on 127.0.0.1)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from fleetsim.core import MultiRobotSimulationCore


class StepHooks:
    """`inbound()` on the simulation's `pre_step`, `outbound()` on its `post_step`, until
    `remove()`."""

    def __init__(self, sim: MultiRobotSimulationCore, inbound: Callable[[], None],
                 outbound: Callable[[], None]) -> None:  # fmt: skip
        self.sim = sim
        self._hooks = [("pre_step", sim.on("pre_step", lambda *_: inbound())),
                       ("post_step", sim.on("post_step", lambda *_: outbound()))]  # fmt: skip

    def remove(self) -> None:
        """Stop calling the hooks."""
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._hooks = []


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, for a server on `host`."""
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
