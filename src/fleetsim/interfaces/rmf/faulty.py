"""Network faults on the Open-RMF fleet-manager API (`faults.network.rmf`): an answer refused
(HTTP 503 with the envelope, which RMF's client treats as "try again") or delayed, per robot
and endpoint, as a `MessageFate` draws (its `drop` is a refusal, its `delay` a delay, in wall
seconds: the API runs at real time). The faults are noted on the HTTP side and handed to the
simulation at its next step, as every command is (the network never touches the arrays)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import parse_qs

from fleetsim.faults.network import MessageFate
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.status_path import PREFIX, answer, respond

WHY = "the fleet manager did not answer (refused: a network fault); try again"
REFUSED = json.dumps(answer(success=False, msg=WHY), separators=(",", ":")).encode()


class FaultyAnswers:
    """An ASGI app: `app` behind refusals and delays drawn by `fate`."""

    def __init__(self, app: Any, fleet: RmfFleet, fate: MessageFate) -> None:
        self.app, self.fleet, self.fate = app, fleet, fate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Refuse or delay the request as its fate says, or pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        endpoint = path.removeprefix(PREFIX).strip("/").split("/")[0] or "root"
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        robot = (query.get("robot_name") or [""])[-1]
        now = time.monotonic()
        outcome, times = self.fate.of(robot, endpoint, now, inbound=True)
        if outcome == "drop":
            self._note("refuse", robot, endpoint)
            await respond(send, 503, REFUSED)
            return
        if outcome == "delay":
            self._note("delay", robot, endpoint)
            await asyncio.sleep(max(times[0] - now, 0.0))
        await self.app(scope, receive, send)

    def _note(self, outcome: str, robot: str, endpoint: str) -> None:
        """A fault row, emitted on the simulation side at its next step."""
        sim = self.fleet.sim

        def emit() -> None:
            now = sim.sim_time
            row = {
                "time": now,
                "kind": f"answer_{outcome}",
                "target": robot,
                "duration": 0.0,
                "topic": endpoint,
                "until": now,
                "by": "rmf",
            }
            sim.events.emit("fault_started", sim, row)

        self.fleet.submit(emit)
