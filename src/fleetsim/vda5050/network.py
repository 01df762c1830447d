"""`NetworkLoop`: one thread that drives any number of paho-mqtt sessions with a selector, so a
thousand vehicles, each with its own session, cost one thread rather than a thousand.

Every call into paho happens on this thread: other threads hand it work with `call(fn)` (a
publish, a connect, a disconnect), which wakes it through a socket pair. Sessions that lose
their connection are reconnected with backoff (1 s doubling to `MAX_BACKOFF_S`), and paho's
`on_connect` runs again, so subscriptions and ONLINE messages are restored.
"""

from __future__ import annotations

import contextlib
import queue
import selectors
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

MIN_BACKOFF_S, MAX_BACKOFF_S = 1.0, 30.0
HOUSEKEEPING_S = 0.5  # keepalive pings and reconnects this often
MAX_PACKETS = 100  # packets read from one socket per wake-up


class NetworkLoop:
    def __init__(self, name: str = "fleetsim-mqtt") -> None:
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._jobs: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
        self._sessions: list[Any] = []
        self._retry: dict[Any, tuple[float, float]] = {}  # client -> (next try, backoff)
        self._closing: set[Any] = set()  # disconnected on purpose: not reconnected
        self._running = True
        self._woken = False  # a wake-up byte is on its way (cleared before the queue is read)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # -- from any thread --------------------------------------------------------------------

    def call(self, fn: Callable[[], Any]) -> None:
        """Run `fn()` on the network thread, soon."""
        self._jobs.put(fn)
        if not self._woken:  # one wake-up byte per batch of work
            self._woken = True
            with contextlib.suppress(BlockingIOError, OSError):
                self._wake_w.send(b"\0")

    def add(self, client: Any) -> None:
        """Drive `client` (connect_async already called on it) from now on."""
        client.on_socket_open = self._opened
        client.on_socket_close = self._closed
        client.on_socket_register_write = self._want_write
        client.on_socket_unregister_write = self._done_writing
        self.call(lambda: self._first_connect(client))

    def disconnect(self, client: Any) -> None:
        """Close `client`'s session cleanly (no last will) and stop driving it."""

        def job() -> None:
            self._closing.add(client)
            self._retry.pop(client, None)
            client.disconnect()

        self.call(job)

    def stop(self, timeout: float = 5.0) -> None:
        """Let queued work finish, then end the thread."""
        done = threading.Event()
        self.call(done.set)
        done.wait(timeout)
        deadline = time.monotonic() + timeout
        while any(c.want_write() for c in self._sessions) and time.monotonic() < deadline:
            time.sleep(0.01)
        self._running = False
        self.call(lambda: None)
        self._thread.join(timeout)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def lost(self, client: Any) -> None:
        """paho's on_disconnect (network thread): try again later unless closing."""
        if client in self._closing or not self._running:
            return
        _, backoff = self._retry.get(client, (0.0, MIN_BACKOFF_S / 2))
        backoff = min(backoff * 2, MAX_BACKOFF_S)
        self._retry[client] = (time.monotonic() + backoff, backoff)

    def connected(self, client: Any) -> None:
        """paho's on_connect succeeded (network thread): the backoff starts over."""
        self._retry.pop(client, None)

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        housekeeping = time.monotonic()
        while self._running:
            for key, mask in self._selector.select(HOUSEKEEPING_S):
                client = key.data
                if client is None:
                    with contextlib.suppress(BlockingIOError, OSError):
                        self._wake_r.recv(4096)
                    continue
                if mask & selectors.EVENT_READ:
                    client.loop_read(MAX_PACKETS)
                if mask & selectors.EVENT_WRITE:
                    client.loop_write()
            self._woken = False
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                job()
            now = time.monotonic()
            if now - housekeeping >= HOUSEKEEPING_S:
                housekeeping = now
                for client in self._sessions:
                    client.loop_misc()
                for client, (when, _) in list(self._retry.items()):
                    if when <= now:
                        self._reconnect(client)

    def _first_connect(self, client: Any) -> None:
        self._sessions.append(client)
        self._reconnect(client)

    def _reconnect(self, client: Any) -> None:
        try:
            client.reconnect()
        except OSError:  # refused, unreachable: later
            self.lost(client)
        else:
            _, backoff = self._retry.get(client, (0.0, MIN_BACKOFF_S / 2))
            # tried again if no CONNACK comes (connected() forgets this)
            self._retry[client] = (time.monotonic() + 2 * backoff + 5.0, backoff)

    def _opened(self, client: Any, _userdata: Any, sock: Any) -> None:
        with contextlib.suppress(OSError):  # small messages go out now, not after an ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._selector.register(sock, selectors.EVENT_READ, client)

    def _closed(self, client: Any, _userdata: Any, sock: Any) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)

    def _want_write(self, client: Any, _userdata: Any, sock: Any) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.modify(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, client)

    def _done_writing(self, client: Any, _userdata: Any, sock: Any) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.modify(sock, selectors.EVENT_READ, client)
