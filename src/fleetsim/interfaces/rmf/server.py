"""RMF's fleet-manager API over HTTP (FastAPI), for an `RmfFleet`, and `RmfServer`: uvicorn in a
thread of its own on 127.0.0.1 (port 0: a free one).

Every answer is `{"data": ..., "success": bool, "msg": str}`, as rmf_demos' fleet manager
answers. A request the fleet manager turns down (an unknown robot, activity or label, a robot in
teleop, a malformed command or body) is HTTP 200 with `success: false` and a `msg` that names the
problem: RMF's client calls `raise_for_status()` and treats an HTTP error as "try again", so
only `success: false` tells it a request is impossible. Other statuses, each with the envelope:
401 (a missing or wrong bearer token, with `--token`), 404 (no such endpoint), 405 (a wrong
method) and 413 (a body over `MAX_BODY_BYTES`). The OpenAPI document (`/openapi.json`) lists
exactly these.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from fleetsim.errors import FleetSimError
from fleetsim.faults.network import MessageFate, MessageFaults
from fleetsim.interfaces.rmf import devices
from fleetsim.interfaces.rmf.fast_http import fast_protocol
from fleetsim.interfaces.rmf.faulty import FaultyAnswers
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.openapi import DESCRIPTION, truthful_openapi
from fleetsim.interfaces.rmf.status import NO_COMMAND
from fleetsim.interfaces.rmf.status_path import (
    PREFIX,
    Bearer,
    RefusedError,
    StatusFastPath,
    answer,
    status_body,
)
from fleetsim.interfaces.serving import free_port

START_TIMEOUT_S = 10.0
JSON = "application/json"
MAX_CMD_ID = 2**63 - 1  # command ids are kept as int64
NEEDS = 'the RMF fleet manager needs FastAPI and uvicorn: pip install "fleetsim[rmf]"'


class Destination(BaseModel):
    """A navigate destination: x, y (metres, RMF's coordinates) and yaw (radians)."""

    x: float
    y: float
    yaw: float = 0.0


class ActivityBody(BaseModel):
    """A `start_activity` body: the activity and its label."""

    activity: str
    label: str


class ToggleBody(BaseModel):
    """A toggle body: `{toggle: bool}`."""

    toggle: bool


class NavigateBody(BaseModel):
    """A `navigate` body: map name, destination and speed limit (0: the robot's own)."""

    map_name: str = ""
    destination: Destination
    speed_limit: float = 0.0


Handler = Callable[..., Awaitable[Any]]


def make_app(fleet: RmfFleet, token: str | None = None, faults: MessageFaults | None = None) -> Any:
    """The FastAPI app serving `fleet`; with `token`, every request must carry
    `Authorization: Bearer <token>`; with `faults`, answers are refused or delayed."""
    try:
        from fastapi import FastAPI, Request
        from fastapi.exceptions import RequestValidationError
        from fastapi.responses import JSONResponse, Response
        from starlette.exceptions import HTTPException as StarletteHTTPException
    except ImportError:
        raise FleetSimError(
            'the RMF fleet manager needs FastAPI: pip install "fleetsim[rmf]"'
        ) from None

    app = FastAPI(title="fleetsim RMF fleet manager", description=DESCRIPTION)

    def refuse(msg: str) -> JSONResponse:
        return JSONResponse(answer(success=False, msg=msg))  # 200: impossible, not "retry"

    @app.exception_handler(StarletteHTTPException)
    async def framework(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """The framework's own refusals in the envelope: 404 and 405 as they are; a body it
        cannot parse (400) is a malformed command, refused with 200 like any other."""
        if exc.status_code == 400:
            return refuse(f"body: not valid JSON ({exc.detail})")
        return JSONResponse(
            answer(success=False, msg=str(exc.detail)),
            status_code=exc.status_code,
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    async def malformed(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "malformed request"}
        where = ".".join(str(p) for p in first.get("loc", ())) or "request"
        return refuse(f"{where}: {first.get('msg', 'malformed')}")

    auth = Bearer(token)
    if token is not None:

        @app.middleware("http")
        async def bearer(request: Request, call_next: Any) -> Any:
            if not auth.allows(request.headers.get("authorization", "").encode("latin-1")):
                return Response(auth.REFUSAL, status_code=401, media_type=JSON)
            return await call_next(request)

    @app.exception_handler(RefusedError)
    async def refused(_request: Request, exc: RefusedError) -> JSONResponse:
        return refuse(str(exc))

    def route(method: str, name: str) -> Callable[[Handler], Handler]:
        """Register a handler at `name/` and at `name` (RMF's client asks without the slash;
        FastAPI would answer that with a redirect)."""

        def register(handler: Handler) -> Handler:
            add = getattr(app, method)
            add(f"{PREFIX}/{name}/")(handler)
            add(f"{PREFIX}/{name}", include_in_schema=False)(handler)
            return handler

        return register

    def robot(name: str, *cmd_ids: int | None) -> int:
        """The robot's row; `RefusedError` for an unknown robot or a command id out of range."""
        for cmd in cmd_ids:
            if cmd is not None and not 0 <= cmd <= MAX_CMD_ID:
                raise RefusedError(f"cmd_id {cmd}: expected a whole number from 0 to {MAX_CMD_ID}")
        k = fleet.index.get(name)
        if k is None:
            names = ", ".join(list(fleet.index)[:5]) + (" ..." if len(fleet.index) > 5 else "")
            raise RefusedError(f"no robot {name!r} (robots: {names})")
        return k

    def drivable(name: str, cmd_id: int) -> None:
        if fleet.accepted.teleop[robot(name, cmd_id)]:
            raise RefusedError(f"{name} is in teleop mode (toggle_teleop to hand it back)")

    def activity_path(activity: str, label: str) -> list[list[float]]:
        labels = fleet.activities.get(activity)
        if labels is None:
            known = ", ".join(fleet.activities) or "none defined"
            raise RefusedError(f"no activity {activity!r} (activities: {known})")
        path = labels.get(label)
        if path is None:
            raise RefusedError(
                f"activity {activity!r} has no label {label!r} (labels: {', '.join(labels)})"
            )
        return path

    @route("get", "status")
    async def status(robot_name: str | None = None) -> Any:
        body = status_body(fleet, robot_name)
        if body is None:
            robot(robot_name or "")  # an unknown robot: refused, naming the robots
        return Response(body, media_type=JSON)

    @route("post", "navigate")
    async def navigate(robot_name: str, cmd_id: int, body: NavigateBody) -> Any:
        robot(robot_name, cmd_id)
        d = body.destination
        if not all(math.isfinite(v) for v in (d.x, d.y, d.yaw, body.speed_limit)):
            raise RefusedError("destination and speed_limit must be finite numbers")
        here = json.loads(fleet.board.map_name[robot(robot_name)])
        levels = fleet.sim.site.graph.level_names if fleet.sim.site is not None else []
        if body.map_name and body.map_name != here and body.map_name not in levels:
            maps = ", ".join(levels) or here
            raise RefusedError(
                f"map {body.map_name!r}: {robot_name} is on {here!r}, and the "
                f"site's maps are {maps}"
            )
        if body.map_name and body.map_name != here and fleet.sim.lifts is None:
            raise RefusedError(f"map {body.map_name!r}: no lift to get there from {here!r}")
        drivable(robot_name, cmd_id)
        fleet.navigate(
            robot_name,
            cmd_id,
            d.x,
            d.y,
            d.yaw,
            max(body.speed_limit, 0.0),
            body.map_name if len(levels) > 1 else "",
        )
        return answer()

    @route("get", "action_paths")
    async def action_paths(activity: str, label: str) -> Any:
        return answer({"map_name": fleet.map_name, "path": activity_path(activity, label)})

    @route("post", "start_activity")
    async def start_activity(robot_name: str, cmd_id: int, body: ActivityBody) -> Any:
        robot(robot_name, cmd_id)
        path = activity_path(body.activity, body.label)
        drivable(robot_name, cmd_id)
        fleet.start_activity(robot_name, cmd_id, path)
        # rmf_demos' client hands `data.path` on, and the adapter reads its map_name and path
        return answer({"path": {"map_name": fleet.map_name, "path": path}})

    @route("post", "toggle_teleop")
    async def toggle_teleop(robot_name: str, body: ToggleBody) -> Any:
        robot(robot_name)
        fleet.set_teleop(robot_name, body.toggle)
        return answer()

    @route("post", "toggle_attach")
    async def toggle_attach(robot_name: str, cmd_id: int, body: ToggleBody) -> Any:
        robot(robot_name, cmd_id)
        fleet.set_attached(robot_name, cmd_id, body.toggle)
        return answer()

    @route("get", "stop_robot")
    async def stop_robot(
        robot_name: str,
        cmd_id: int | None = None,
        running_cmd_id: int | None = None,
        stop_cmd_id: int | None = None,
    ) -> Any:
        """Stop the robot; `cmd_id` (rmf_demos' client) or `stop_cmd_id` becomes its
        `last_completed_request`, and with `running_cmd_id` only if that command runs."""
        stop_id = stop_cmd_id if stop_cmd_id is not None else cmd_id
        running = fleet.accepted.running(robot(robot_name, running_cmd_id, stop_id))
        if running_cmd_id is not None and running not in (NO_COMMAND, running_cmd_id):
            raise RefusedError(f"{robot_name} is running command {running}, not {running_cmd_id}")
        fleet.stop(robot_name, stop_id)
        return answer()

    @route("get", "door_states")
    async def door_states() -> Any:
        return answer(devices.door_states(fleet))

    @route("post", "door_request")
    async def door_request(body: devices.DoorRequest) -> Any:
        why = devices.check_door(fleet, body)
        if why is not None:
            raise RefusedError(why)
        devices.apply_door(fleet, body)
        return answer()

    @route("get", "lift_states")
    async def lift_states() -> Any:
        return answer(devices.lift_states(fleet))

    @route("post", "lift_request")
    async def lift_request(body: devices.LiftRequest) -> Any:
        why = devices.check_lift(fleet, body)
        if why is not None:
            raise RefusedError(why)
        devices.apply_lift(fleet, body)
        return answer()

    app.openapi = lambda: truthful_openapi(app, token is not None)  # type: ignore[method-assign]
    served = StatusFastPath(app, fleet, auth)
    if faults is not None and faults.any:  # (then every request goes through the faults)
        return FaultyAnswers(served, fleet, MessageFate(faults))
    return served


class RmfServer:
    """uvicorn serving `app` on `host:port` in a thread, until `stop()`."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app, self.host = app, host
        self.port = port or free_port(host)
        self.fast = False
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server's base URL, `http://127.0.0.1:PORT/open-rmf/rmf_demos_fm`."""
        return f"http://{self.host}:{self.port}{PREFIX}"

    def start(self) -> RmfServer:
        """Serve in a thread of its own; returns once it accepts connections."""
        try:
            import uvicorn
        except ImportError:
            raise FleetSimError(
                'the RMF fleet manager needs uvicorn: pip install "fleetsim[rmf]"'
            ) from None
        http: Any = "auto"
        if isinstance(self.app, StatusFastPath):
            http = fast_protocol(self.app.answer_url) or "auto"
        self.fast = http != "auto"  # status answered by the HTTP protocol itself
        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            http=http,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, name="fleetsim-rmf-http", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and time.monotonic() < deadline:
            if not self._thread.is_alive():
                break
            time.sleep(0.01)
        if not self._server.started:
            raise FleetSimError(f"the RMF fleet manager could not serve on {self.host}:{self.port}")
        return self

    def stop(self) -> None:
        """Stop serving and join the thread (open connections are closed)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(START_TIMEOUT_S)
        self._server = self._thread = None

    def __enter__(self) -> RmfServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
