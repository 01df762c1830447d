"""`Served`: a simulation, its RMF fleet and the HTTP server, with a JSON call helper."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from fleetsim import MultiRobotSimulationCore
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.server import RmfServer


class Served:
    def __init__(self, sim: MultiRobotSimulationCore, fleet: RmfFleet, server: RmfServer) -> None:
        self.sim, self.fleet, self.server = sim, fleet, server

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        data = (
            None
            if body is None
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        request = urllib.request.Request(
            f"{self.server.url}/{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def step_until(self, check: Callable[[], Any], steps: int = 2000) -> Any:
        for _ in range(steps):
            self.sim.step_once()
            found = check()
            if found:
                return found
        raise AssertionError("not reached")
