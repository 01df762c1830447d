"""Live views for Foxglove over its WebSocket protocol (foxglove-sdk): a running simulation
(`LiveOut`, what `fleetsim run --serve` uses) or a recording played back (`stream_recording`).

Open Foxglove, "Open connection", `ws://127.0.0.1:8765`: the same topics as a recording.
The server binds 127.0.0.1 unless told otherwise. A viewer may connect at any time: when it
subscribes to `/scene` or `/fleet/robots` it is sent the world and the robot list as they stand
(`Latch`), not only what comes after. foxglove-sdk speaks the `foxglove.sdk.v1` subprotocol
(current Foxglove and Lichtblick); a client offering only `foxglove.websocket.v1` is refused by
the SDK with HTTP 400 "Missing expected sec-websocket-protocol header".
"""

from __future__ import annotations

import threading
import time
from typing import Any

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.recording.latch import Latch
from fleetsim.recording.mcap_process import Names, action_events, fleet_points, state_json
from fleetsim.recording.reader import Recording

NEEDS = 'the live view needs foxglove-sdk: pip install "fleetsim[record]"'
NS = 1_000_000_000
LATE_SEND_S = 0.05  # a new subscriber's catch-up goes out this long after it subscribed


class FoxgloveServer:
    """Foxglove's WebSocket server on `host:port` (0: a free port), channels made as topics
    first appear. With `start=False` it takes connections only from `start()`: make the
    channels a viewer will want first (see `start`)."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 8765, name: str = "fleetsim", start: bool = True
    ) -> None:
        try:
            import foxglove
        except ImportError:
            raise FleetSimError(NEEDS) from None
        self._foxglove = foxglove
        self._context = foxglove.Context()
        self.subscribed = threading.Event()  # a client subscribed to a channel
        self.latch = Latch()
        self.host, self.port, self.name = host, int(port), name
        self.server: Any = None
        self._channels: dict[str, Any] = {}
        self._stopped = False
        if start:
            self.start()

    def start(self) -> None:
        """Take connections (once). A viewer that connects after the channels are made is
        offered them all as it connects; one connected before a channel is made may subscribe
        to it in the moment foxglove-sdk has sent it the channel but not yet noted that it did,
        and is then answered "Unknown channel ID" and sent nothing on it (seen under load)."""
        if self.server is not None:
            return
        foxglove, owner = self._foxglove, self

        class Listener(foxglove.ServerListener):  # type: ignore[misc,name-defined]
            def on_subscribe(listener, client: Any, channel: Any) -> None:  # noqa: N805
                owner.subscribed.set()
                if owner.latch.keeps(channel.topic):
                    # once the subscription is in place (after this callback returns)
                    later = threading.Timer(LATE_SEND_S, owner._catch_up, (channel.topic,))
                    later.daemon = True
                    later.start()

        try:
            self.server = foxglove.start_server(
                name=self.name,
                host=self.host,
                port=self.port,
                context=self._context,
                server_listener=Listener(),
            )
        except Exception as exc:  # the SDK raises its own kinds for a port in use
            raise ConfigError(f"--serve on {self.host}:{self.port}: {exc}") from None
        self.port = int(self.server.port)

    @property
    def url(self) -> str:
        """`ws://HOST:PORT`, for Foxglove's Open connection."""
        return f"ws://{self.host}:{self.port}"

    def channel(self, topic: str, schema_name: str, encoding: str, schema: bytes) -> None:
        """Announce a channel (once per topic)."""
        if topic in self._channels:
            return
        message_encoding = "protobuf" if encoding == "protobuf" else "json"
        described = self._foxglove.Schema(name=schema_name, encoding=encoding, data=schema)
        self._channels[topic] = self._foxglove.Channel(
            topic, schema=described, message_encoding=message_encoding, context=self._context
        )

    def message(self, topic: str, time_ns: int, data: bytes) -> None:
        """Send a message to the clients of `topic` (and keep what a late viewer needs)."""
        if self.latch.keeps(topic):
            self.latch.add(topic, time_ns, data)
        self._channels[topic].log(data, log_time=time_ns)

    def _catch_up(self, topic: str) -> None:
        """Send `topic`'s latched state (its subscribers so far get it again: the scene's
        entities and the robot list replace what they have)."""
        latched = self.latch.replay(topic)
        channel = self._channels.get(topic)
        if latched is not None and channel is not None and not self._stopped:
            channel.log(latched[1], log_time=latched[0])

    def stop(self) -> None:
        """Stop the server (clients are disconnected)."""
        self._stopped = True
        if self.server is not None:
            self.server.stop()


class LiveOut:
    """A recorder's output sent to a `FoxgloveServer` instead of a file (same messages)."""

    def __init__(self, server: FoxgloveServer) -> None:
        self.server = server
        self._names = Names()

    def channel(self, topic: str, schema_name: str, encoding: str, schema: bytes) -> None:
        """Announce a channel on the server."""
        self.server.channel(topic, schema_name, encoding, schema)

    def message(self, topic: str, time_ns: int, data: bytes) -> None:
        """Send an encoded message."""
        self.server.message(topic, time_ns, data)

    def fleet(self, topic: str, time_ns: int, head: bytes, pos: Any, quat: Any) -> None:
        """Send a `/fleet` point cloud made from the poses."""
        self.server.message(topic, time_ns, bytes(fleet_points(pos, quat, head)))

    def state(self, topic: str, time_ns: int, table: dict[str, Any]) -> None:
        """Send a `/fleet/state` table."""
        self.server.message(topic, time_ns, state_json(table))

    def names(self, names: dict[int, str]) -> None:
        """Note robots' names for the events that name them."""
        self._names.update(names)

    def actions(self, topic: str, items: list[tuple[str, float, str, str, str | None]]) -> None:
        """Send the action events of a step."""
        for item, data in zip(items, action_events(items), strict=True):
            self.server.message(topic, round(item[1] * NS), data)

    def collisions(self, topic: str, time_ns: int, keys: Any) -> None:
        """Send a `collisions` event for the pairs in `keys`."""
        self.server.message(topic, time_ns, self._names.collisions(time_ns, keys))

    def flush(self, force: bool = False) -> None:
        """Nothing to flush: messages go out as they come."""
        return None  # messages go out as they are logged

    def close(self) -> None:
        """Nothing to close: the server stops with the run."""
        return None  # the server outlives one recorder; its owner stops it


def stream_recording(
    recording: Recording,
    server: FoxgloveServer,
    speed: float = 1.0,
    start: float = 0.0,
    until: float | None = None,
    wait_s: float | None = None,
) -> int:
    """Send a recording's messages to `server` at `speed` x their recorded pace (0: at once),
    from `start` to `until` (simulated seconds); returns how many were sent. With `wait_s`,
    the channels are offered first and the stream waits (at most that long) for a client to
    subscribe."""
    reader = recording._reader
    offer_channels(recording, server)
    if wait_s is not None:
        server.subscribed.wait(wait_s)
    sent, wall0, sim0 = 0, time.monotonic(), None
    first = max(round(start * NS), 0)
    last = None if until is None else round(until * NS) + 1
    for schema, channel, message in reader.iter_messages(starting_at=first, ending_before=last):
        if schema is None:
            continue
        t = message.log_time / NS
        sim0 = t if sim0 is None else sim0
        if speed > 0:
            wait = wall0 + (t - sim0) / speed - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        server.channel(channel.topic, schema.name, schema.encoding, schema.data)
        server.message(channel.topic, message.log_time, message.data)
        sent += 1
    return sent


def offer_channels(recording: Recording, server: FoxgloveServer) -> None:
    """Make `server`'s channels for the topics in `recording`'s summary (before the server
    starts, so that a viewer is offered them all as it connects: `FoxgloveServer.start`)."""
    summary = recording._reader.get_summary()
    if summary is not None:
        for channel in summary.channels.values():
            schema = summary.schemas.get(channel.schema_id)
            if schema is not None:
                server.channel(channel.topic, schema.name, schema.encoding, schema.data)
