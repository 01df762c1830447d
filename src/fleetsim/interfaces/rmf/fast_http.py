"""Status answers written by uvicorn's HTTP protocol itself, before any ASGI machinery.

RMF's demo fleet adapter polls `status/?robot_name=` for every robot ten times a second, each
poll on a new connection (`requests.get`). Through ASGI that costs about 180 us of the
simulation process's Python time per poll (500 robots: most of a core, under the same GIL as
the simulation). `fast_protocol(answer)` subclasses uvicorn's httptools protocol so that a GET
whose answer `answer(url, headers)` knows (bytes) is written back as soon as its headers are
parsed; everything else, including a status request it declines, goes on to the app as usual.

This leans on uvicorn's `HttpToolsProtocol` (documented as a `Config(http=...)` class but not
as an extension point); `fast_protocol` returns None when the protocol is not what it expects,
and the server then answers through ASGI alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Answer = Callable[[bytes, list[tuple[bytes, bytes]]], bytes | None]


class _Answered:
    """Stands in for uvicorn's request cycle once a request was answered here."""

    response_complete = True
    disconnected = False
    keep_alive = True

    class message_event:  # noqa: N801 - the attribute uvicorn reads
        @staticmethod
        def set() -> None:
            return None


ANSWERED = _Answered()


def fast_protocol(answer: Answer) -> type | None:
    """A uvicorn HTTP protocol class answering what `answer` answers, or None (no httptools,
    or a uvicorn whose protocol differs from the one this was written against)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None
    if not all(
        hasattr(HttpToolsProtocol, a) for a in ("on_headers_complete", "on_response_complete")
    ):
        return None

    class FastAnswerProtocol(HttpToolsProtocol):
        def on_headers_complete(self) -> None:
            parser: Any = self.parser
            idle = self.cycle is None or self.cycle.response_complete
            if idle and not self.pipeline and parser.get_method() == b"GET":
                body = answer(self.url, self.headers)
                if body is not None:
                    keep = parser.should_keep_alive() and parser.get_http_version() == "1.1"
                    self._write(body, keep)
                    return
            super().on_headers_complete()

        def _write(self, body: bytes, keep: bool) -> None:
            head = [b"HTTP/1.1 200 OK\r\n"]
            head += [b"%s: %s\r\n" % kv for kv in self.server_state.default_headers]
            head.append(b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body))
            if not keep:
                head.append(b"connection: close\r\n")
            self.transport.write(b"".join(head) + b"\r\n" + body)
            self.cycle = ANSWERED  # type: ignore[assignment]
            if not keep:
                self.transport.close()
            self.on_response_complete()  # arms the keep-alive timeout, as after any answer

    return FastAnswerProtocol
