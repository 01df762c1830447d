"""Status answers written before uvicorn parses anything: a protocol in front of uvicorn's own.

RMF's demo fleet adapter polls `status/?robot_name=` for every robot ten times a second, each
poll on a new connection (`requests.get`). Through uvicorn and ASGI that costs 120-180 us of
the simulation process's Python time per poll, under the same GIL as the simulation: 500 robots
fill a core. `fast_protocol(answer)` is a uvicorn HTTP protocol class (`Config(http=...)`) that
reads each request's head itself; a plain `GET` whose answer `answer(target, headers)` knows
is written back at once, and the connection stays with it (kept alive, or closed as asked).
Anything else (another method, a body, an upgrade, a head it cannot read, a status request it
declines) hands the connection, with every byte not yet answered, to uvicorn's own protocol,
which from then on serves it as usual: FastAPI answers, errors included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

Answer = Callable[[bytes, list[tuple[bytes, bytes]]], "bytes | None"]
MAX_HEAD = 16 * 1024  # a longer head is uvicorn's to refuse
REFUSED = (b"content-length", b"transfer-encoding", b"upgrade", b"expect")  # uvicorn's to serve


def fast_protocol(answer: Answer) -> type[asyncio.Protocol] | None:
    """The protocol class answering what `answer` answers, or None without uvicorn."""
    try:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol
    except ImportError:
        return None

    class FastAnswers(asyncio.Protocol):
        def __init__(
            self,
            config: Any,
            server_state: Any,
            app_state: Any,
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            self.config, self.server_state, self.app_state = config, server_state, app_state
            self.loop = _loop or asyncio.get_event_loop()
            self.transport: Any = None
            self.buffer = b""
            self.idle: asyncio.TimerHandle | None = None
            self.full = False  # the client is not reading our answers fast enough

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport
            self.server_state.connections.add(self)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.server_state.connections.discard(self)
            self._disarm()

        def shutdown(self) -> None:  # uvicorn calls it when it stops
            self.transport.close()

        def pause_writing(self) -> None:
            self.full = True

        def resume_writing(self) -> None:
            self.full = False
            self.transport.resume_reading()
            self._serve()

        def data_received(self, data: bytes) -> None:
            self.buffer += data
            self._serve()

        def _serve(self) -> None:
            """Answer the complete heads in the buffer, in order, until one is not ours."""
            buffer, at = self.buffer, 0
            while at < len(buffer) and not self.transport.is_closing():
                if self.full:  # go on when the answers so far have drained
                    self.transport.pause_reading()
                    break
                end = buffer.find(b"\r\n\r\n", at)
                if end < 0:
                    if len(buffer) - at <= MAX_HEAD:
                        break  # the rest of the head is on its way
                    self.buffer = buffer[at:]
                    return self._hand_over()
                reply = self._reply(buffer[at:end])
                if reply is None:
                    self.buffer = buffer[at:]
                    return self._hand_over()
                at = end + 4
                self._write(*reply)
            self.buffer = buffer[at:]
            if not self.transport.is_closing():
                self._arm()

        def _reply(self, head: bytes) -> tuple[bytes, bool] | None:
            """(the answer, keep the connection open) for a head we answer, else None."""
            lines = head.split(b"\r\n")
            parts = lines[0].split(b" ")
            if len(parts) != 3 or parts[0] != b"GET" or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
                return None
            headers = []
            keep = parts[2] == b"HTTP/1.1"
            for line in lines[1:]:
                name, sep, value = line.partition(b":")
                name, value = name.lower(), value.strip()
                if not sep or not name or name != name.strip() or name in REFUSED:
                    return None
                if name == b"connection":
                    keep = keep and value.lower() != b"close"
                headers.append((name, value))
            body = answer(parts[1], headers)
            return None if body is None else (body, keep)

        def _write(self, body: bytes, keep: bool) -> None:
            head = [b"HTTP/1.1 200 OK\r\n"]
            head += [b"%s: %s\r\n" % kv for kv in self.server_state.default_headers]
            head.append(b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body))
            if not keep:
                head.append(b"connection: close\r\n")
            self.transport.write(b"".join(head) + b"\r\n" + body)
            self.server_state.total_requests += 1
            if not keep:
                self.transport.close()

        def _hand_over(self) -> None:
            self.server_state.connections.discard(self)
            self._disarm()
            protocol = AutoHTTPProtocol(
                config=self.config,
                server_state=self.server_state,  # type: ignore[call-arg]
                app_state=self.app_state,
                _loop=self.loop,
            )
            protocol.connection_made(self.transport)
            self.transport.set_protocol(protocol)
            data, self.buffer = self.buffer, b""
            protocol.data_received(data)

        def _arm(self) -> None:
            self._disarm()
            self.idle = self.loop.call_later(self.config.timeout_keep_alive, self.transport.close)

        def _disarm(self) -> None:
            if self.idle is not None:
                self.idle.cancel()
                self.idle = None

    return FastAnswers
