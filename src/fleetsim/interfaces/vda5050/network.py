"""`NetworkLoop`: one thread that drives any number of paho-mqtt sessions with a selector, so a
thousand vehicles, each with its own session, cost one thread rather than a thousand.

Every call into paho happens on this thread: other threads hand it work with `call(fn)` (a
connect, a disconnect) or `send(...)` (a message), which wake it through a socket pair. Sessions
that lose their connection are reconnected with backoff (1 s doubling to `MAX_BACKOFF_S`), and
paho's `on_connect` runs again, so subscriptions and ONLINE messages are restored.

QoS 0 messages on plain TCP (the state and visualization flood) skip paho's per-message Python
(~50 us each) and go out as MQTT PUBLISH packets written in one `send` per session per batch,
between paho's own packets, never inside one: paho's queue is drained first, and paho writes
again only once ours is. Everything else (QoS 1, TLS) goes through `client.publish`. A session
that cannot keep up buffers at most `MAX_BUFFER` bytes; QoS 0 messages beyond are dropped
(and counted), as QoS 0 allows.
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
MAX_BUFFER = 64 * 2**20  # bytes of QoS 0 messages waiting for one session, at most


def publish_packet(topic: str, payload: str, retain: bool = False) -> bytes:
    """An MQTT 3.1.1 PUBLISH packet with QoS 0 (fixed header, topic name, payload)."""
    name, body = topic.encode(), payload.encode()
    size = 2 + len(name) + len(body)
    length = bytearray()
    while True:  # the remaining length: 7 bits a byte, high bit set when more follow
        size, digit = divmod(size, 128)
        length.append(digit | (0x80 if size else 0))
        if not size:
            break
    return b"%c%s%s%s%s" % (0x30 | retain, bytes(length), len(name).to_bytes(2, "big"), name, body)


class NetworkLoop:
    """One thread that runs every MQTT client's network I/O (a selector over their sockets), so
    thousands of vehicle connections need no thread each."""

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
        self._cut: set[Any] = set()  # connections cut (a fault): not reconnected until restored
        self._out: queue.SimpleQueue[tuple[Any, str, str, int, bool]] = queue.SimpleQueue()
        self._raw: dict[Any, bytearray] = {}  # client -> QoS 0 packets not yet sent
        self._started: set[Any] = set()  # clients with a packet of ours partly sent
        self.dropped = 0  # QoS 0 messages dropped because a session's buffer was full
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

    def send(self, client: Any, topic: str, payload: str, qos: int, retain: bool) -> None:
        """Publish on `client`'s session, soon (from any thread)."""
        self._out.put((client, topic, payload, qos, retain))
        if not self._woken:
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

    def cut(self, client: Any) -> None:
        """Break `client`'s connection without a goodbye (the broker sends its last will), and
        leave it broken until `restore` (a network fault)."""

        def job() -> None:
            self._cut.add(client)
            self._retry.pop(client, None)
            sock = client.socket()
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # no DISCONNECT packet: the will goes out

        self.call(job)

    def restore(self, client: Any) -> None:
        """Connect a cut client again (now)."""

        def job() -> None:
            if client in self._cut:
                self._cut.discard(client)
                self._retry[client] = (time.monotonic(), MIN_BACKOFF_S / 2)

        self.call(job)

    def stop(self, timeout: float = 5.0) -> None:
        """Let queued work and messages go out (for up to `timeout` s), then end the thread."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ask(self._drained, max(deadline - time.monotonic(), 0.01)) is not False:
                break  # drained, or no answer in time
            time.sleep(0.01)
        self._running = False
        self.call(lambda: None)
        self._thread.join(timeout)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def ask(self, fn: Callable[[], Any], timeout: float) -> Any:
        """`fn()` run on the network thread; None if it does not answer within `timeout`."""
        answer: list[Any] = []
        done = threading.Event()

        def job() -> None:
            answer.append(fn())
            done.set()

        self.call(job)
        return answer[0] if done.wait(timeout) else None

    def _drained(self) -> bool:
        """(network thread) Nothing waits to be written."""
        if not self._out.empty():
            return False
        return not any(c.want_write() for c in self._sessions) and not any(self._raw.values())

    def lost(self, client: Any) -> None:
        """paho's on_disconnect (network thread): try again later unless closing."""
        if client in self._closing or client in self._cut or not self._running:
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
                    self._writable(client)
            self._woken = False
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                job()
            self._publish_queued()
            now = time.monotonic()
            if now - housekeeping >= HOUSEKEEPING_S:
                housekeeping = now
                for client in self._sessions:
                    client.loop_misc()
                for client, (when, _) in list(self._retry.items()):
                    if when <= now:
                        self._reconnect(client)

    def _publish_queued(self) -> None:
        touched = set()
        while True:
            try:
                client, topic, payload, qos, retain = self._out.get_nowait()
            except queue.Empty:
                break
            sock = client.socket()
            if qos or type(sock) is not socket.socket or not client.is_connected():
                client.publish(topic, payload, qos, retain)  # paho's way (TLS, QoS 1, offline)
                continue
            buffer = self._raw.setdefault(client, bytearray())
            if len(buffer) > MAX_BUFFER:
                self.dropped += 1
                continue
            buffer += publish_packet(topic, payload, retain)
            touched.add(client)
        for client in touched:
            self._flush(client)

    def _writable(self, client: Any) -> None:
        """The session's socket takes bytes: ours first if one is partly sent, then paho's,
        then ours."""
        if client in self._started:
            self._flush(client)
            if client in self._started:
                return
        if client.want_write():
            client.loop_write()
        self._flush(client)

    def _flush(self, client: Any) -> None:
        """Send what we hold for `client`, unless paho is in the middle of its own."""
        buffer = self._raw.get(client)
        sock = client.socket()
        if not buffer or sock is None:
            return
        if client not in self._started and client.want_write():
            self._want_write(client, None, sock)  # after paho's packets
            return
        try:
            sent = sock.send(buffer)
        except BlockingIOError:
            sent = 0
        except OSError:  # the connection is gone: paho notices and reconnects
            buffer.clear()
            self._started.discard(client)
            return
        del buffer[:sent]
        if buffer:
            self._started.add(client)
            self._want_write(client, None, sock)
        else:
            self._started.discard(client)
            if not client.want_write():
                self._done_writing(client, None, sock)

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
        self._raw.pop(client, None)  # QoS 0: lost with the connection
        self._started.discard(client)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)

    def _want_write(self, client: Any, _userdata: Any, sock: Any) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.modify(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, client)

    def _done_writing(self, client: Any, _userdata: Any, sock: Any) -> None:
        if self._raw.get(client):
            return  # ours still wait for the socket
        with contextlib.suppress(KeyError, ValueError):
            self._selector.modify(sock, selectors.EVENT_READ, client)
