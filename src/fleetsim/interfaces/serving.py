"""What every protocol interface does the same way: `StepHooks` (apply what arrived at the start
of each step, report after it) and `free_port` (a port for a server on 127.0.0.1)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any


class StepHooks:
    """`inbound()` on the simulation's `pre_step`, `outbound()` on its `post_step`, until
    `remove()`."""

    def __init__(self, sim: Any, inbound: Callable[[], None], outbound: Callable[[], None]) -> None:
        self.sim = sim
        self._hooks = [("pre_step", sim.on("pre_step", lambda *_: inbound())),
                       ("post_step", sim.on("post_step", lambda *_: outbound()))]  # fmt: skip

    def remove(self) -> None:
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._hooks = []


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
