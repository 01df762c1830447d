"""Status requests, answered the same way on every path, and the bearer token, checked in
one place.

RMF's adapters poll `status/` for every robot several times a second, so status is answered
three ways: by `fast_http`'s protocol before uvicorn parses anything (a new connection), by
`StatusFastPath` in front of the ASGI app (a connection uvicorn serves), and by the FastAPI
route (anything the first two leave to it: an unknown robot, odd query strings). All three
answer from `status_body`, and the token is checked by one `Bearer`. The tests ask the same
questions of each and compare the bytes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.openapi import MAX_BODY_BYTES

PREFIX = "/open-rmf/rmf_demos_fm"


class RefusedError(Exception):
    """A request the fleet manager turns down: answered `success: false` with this message."""


def answer(data: Any = None, success: bool = True, msg: str = "") -> dict[str, Any]:
    """The envelope of every answer: `{"data", "success", "msg"}`."""
    return {"data": data if data is not None else {}, "success": success, "msg": msg}


class Bearer:
    """`Authorization: Bearer TOKEN` when there is a token; `allows` the header's value."""

    REFUSAL = json.dumps(
        answer(success=False, msg="a bearer token is required (--token)"), separators=(",", ":")
    ).encode()

    def __init__(self, token: str | None) -> None:
        self.expected = None if token is None else f"Bearer {token}".encode()

    def allows(self, value: bytes | None) -> bool:
        """Whether a request whose Authorization header is `value` (None: none) may go on."""
        return self.expected is None or value == self.expected


def status_body(fleet: RmfFleet, robot_name: str | None) -> bytes | None:
    """The answer to `status/`: every robot (`robot_name` None), or one; None for a robot the
    fleet does not have. From the status board the last step put up."""
    board = fleet.board
    if robot_name is None:
        return board.all_body()
    k = fleet.index.get(robot_name)
    return None if k is None else board.body(k)


class StatusFastPath:
    """An ASGI app answering `GET status/` (one robot or all) straight from the fleet's status
    board, and handing every other request, and every status request it cannot answer
    (an unknown robot, a missing token), to `app`. RMF's adapters poll status for every robot
    several times a second; FastAPI's routing and validation would be most of that cost. A
    request body over `MAX_BODY_BYTES` is answered 413 here, before any of it is parsed."""

    def __init__(self, app: Any, fleet: RmfFleet, auth: Bearer) -> None:
        self.app, self.fleet, self.auth = app, fleet, auth
        self._paths = (f"{PREFIX}/status/".encode(), f"{PREFIX}/status".encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Answer a status request here, refuse a body over the limit, or pass the request on."""
        body = None
        if scope["type"] == "http" and scope["method"] == "GET":
            body = self.answer(scope["path"].encode(), scope["query_string"], scope["headers"])
        if body is not None:
            await respond(send, 200, body)
            return
        if scope["type"] == "http":
            request = await read_body(scope, receive)
            if request is None:
                msg = f"the request body is over the limit of {MAX_BODY_BYTES} bytes"
                await respond(send, 413, json.dumps(answer(success=False, msg=msg)).encode())
                return
            receive = replay(request, receive)
        await self.app(scope, receive, send)

    def answer_url(self, url: bytes, headers: list[tuple[bytes, bytes]]) -> bytes | None:
        """The answer to `GET url` (a raw request target), or None to leave it to the app."""
        path, _, query = url.partition(b"?")
        return self.answer(path, query.partition(b"#")[0], headers)

    def answer(self, path: bytes, query: bytes, headers: list[tuple[bytes, bytes]]) -> bytes | None:
        """The answer to `GET path?query`, or None to leave it to the app."""
        if path not in self._paths:
            return None
        if self.auth.expected is not None:
            given = next((v for name, v in headers if name == b"authorization"), None)
            if not self.auth.allows(given):
                return None  # the app answers 401, through the same check
        if not query:
            return status_body(self.fleet, None)
        fields = parse_qs(query.decode("latin-1"), keep_blank_values=True)
        names = fields.get("robot_name")
        if names is None or len(fields) > 1:
            return None
        return status_body(self.fleet, names[-1])


async def respond(send: Any, status: int, body: bytes) -> None:
    """Send a whole JSON response."""
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def read_body(scope: Any, receive: Any) -> bytes | None:
    """The whole request body, or None when it is over `MAX_BODY_BYTES` (read no further)."""
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > MAX_BODY_BYTES:
            return None
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away; the app sees an empty body
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def replay(body: bytes, receive_more: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI `receive` giving `body` in one message, then what the connection says next
    (a disconnect, when it comes)."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return dict(await receive_more())
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
