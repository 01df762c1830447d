"""`MqttLink`: the MQTT sessions of a fleet of VDA 5050 vehicles (paho-mqtt).

`per-vehicle` (the standard's way): one session per vehicle, each with its last will, a retained
`connection` message saying CONNECTIONBROKEN, so a master control learns when a vehicle drops
off. `shared`: one session for the whole fleet (fewer sockets for very large fleets; no per-
vehicle last will). Sessions reconnect by themselves with backoff (1 s doubling to 30 s) and
subscribe again; `on_connect(serial)` lets the caller publish ONLINE again.

All sessions run on one network thread (`NetworkLoop`), never on the simulation's: inbound
messages go into a thread-safe queue that the simulation empties at the start of a step
(`take()`); `publish()` hands a message to the network thread and returns at once.
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.interfaces.vda5050.network import NetworkLoop
from fleetsim.interfaces.vda5050.topics import INBOUND, OUTBOUND, Topics

MODES = ("per-vehicle", "shared")


@dataclass(frozen=True)
class Inbound:
    """A message received for a vehicle: its serial number, topic and payload."""

    serial: str
    topic: str  # "order" or "instantActions"
    payload: bytes


def broker_address(url: str) -> tuple[str, int, bool]:
    """(host, port, tls) of `mqtt://host:port` or `mqtts://host:port`."""
    parsed = urlparse(url if "://" in url else f"mqtt://{url}")
    if parsed.scheme not in ("mqtt", "mqtts", "tcp", "ssl") or not parsed.hostname:
        raise ConfigError(f"broker {url!r}: expected mqtt://HOST:PORT or mqtts://HOST:PORT")
    tls = parsed.scheme in ("mqtts", "ssl")
    return parsed.hostname, parsed.port or (8883 if tls else 1883), tls


class MqttLink:
    """The vehicles' MQTT connections (one per vehicle, or one shared): subscriptions, last wills,
    inbound messages queued, outbound published."""

    def __init__(
        self,
        topics: Topics,
        serials: Sequence[str],
        broker: str,
        mode: str = "per-vehicle",
        will: Callable[[str], str] | None = None,
        username: str | None = None,
        password: str | None = None,
        keepalive: int = 30,
        tls_ca: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"connection mode must be one of {', '.join(MODES)}, got {mode!r}")
        try:
            import paho.mqtt.client as mqtt
        except ImportError:
            raise FleetSimError(
                'VDA 5050 needs paho-mqtt: pip install "fleetsim[vda5050]"'
            ) from None
        self._mqtt = mqtt
        self.topics, self.serials, self.mode = topics, list(serials), mode
        self._known = set(self.serials)
        self.host, self.port, self.tls = broker_address(broker)
        self.tls_ca = tls_ca  # a CA certificate file (implies TLS); else the system's CAs
        if tls_ca is not None:
            self.tls = True
        self.will, self.keepalive = will, keepalive
        self.credentials = (username, password)
        self.inbound: queue.SimpleQueue[Inbound] = queue.SimpleQueue()
        self.on_connect: Callable[[str], None] | None = None
        self._clients: dict[str, Any] = {}  # serial (or "" when shared) -> client
        self._connected: set[str] = set()
        self._loop: NetworkLoop | None = None
        self._token = secrets.token_hex(3)
        self.counts: Counter[str] = Counter()  # messages received and published, by topic
        self._refused: str | None = None  # the broker's reason, when it said no
        self._lock = threading.Lock()

    # -- sessions ---------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> MqttLink:
        """Open the sessions and wait until every one is connected and its subscription
        acknowledged (so a master control that reads ONLINE can send an order at once)."""
        keys = self.serials if self.mode == "per-vehicle" else [""]
        self._loop = NetworkLoop()
        for key in keys:
            self._clients[key] = self._client(key)
            self._loop.add(self._clients[key])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self._connected) == len(keys):
                    return self
                refused = self._refused
            if refused is not None and not self._connected:
                self.stop()
                where = f"{self.host}:{self.port}"
                raise FleetSimError(
                    f"the broker {where} refused the MQTT session: {refused} "
                    "(check --username/--password)"
                )
            time.sleep(0.01)
        self.stop()
        raise FleetSimError(
            f"could not connect {len(keys)} MQTT session(s) to "
            f"{self.host}:{self.port} within {timeout:.0f} s"
        )

    def _client(self, key: str) -> Any:
        mqtt = self._mqtt
        # unique per link: two simulations serving the same names on one broker must not
        # take each other's sessions over (the broker drops the older of two equal ids)
        name = f"{self.topics.manufacturer}_{key or 'fleet'}_{self._token}"
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=name, clean_session=True)
        if self.credentials[0] is not None:
            client.username_pw_set(*self.credentials)
        if self.tls:
            client.tls_set(ca_certs=self.tls_ca)
        if key and self.will is not None:
            qos, retain = OUTBOUND["connection"]
            client.will_set(self.topics.topic(key, "connection"), self.will(key), qos, retain)
        client.on_connect = lambda c, _u, _f, rc, _p: self._connected_cb(c, key, rc)
        client.on_subscribe = lambda _c, _u, _mid, _codes, _p: self._subscribed(key)
        client.on_disconnect = lambda c, _u, _f, _rc, _p: self._forget(c, key)
        client.on_message = lambda _c, _u, msg: self._received(msg.topic, msg.payload)
        client.connect_async(self.host, self.port, self.keepalive)
        return client

    def _connected_cb(self, client: Any, key: str, rc: Any) -> None:
        if getattr(rc, "is_failure", False):
            with self._lock:
                self._refused = str(rc)
            return  # tried again with backoff
        if self._loop is not None:
            self._loop.connected(client)
        client.subscribe(self.topics.inbound_filter(key or "+"))

    def _subscribed(self, key: str) -> None:
        """The broker acknowledged the subscription: orders sent from now on arrive."""
        with self._lock:
            self._connected.add(key)
        if self.on_connect is not None:
            for serial in [key] if key else self.serials:
                self.on_connect(serial)

    def _forget(self, client: Any, key: str) -> None:
        with self._lock:
            self._connected.discard(key)
        if self._loop is not None:
            self._loop.lost(client)

    def _received(self, topic: str, payload: bytes) -> None:
        where = self.topics.split(topic)
        if where is not None and where[1] in INBOUND and where[0] in self._known:
            self.inbound.put(Inbound(where[0], where[1], payload))
            self.counts[where[1]] += 1

    # -- traffic ----------------------------------------------------------------------------

    def take(self) -> list[Inbound]:
        """Everything received since the last call, oldest first."""
        out = []
        while True:
            try:
                out.append(self.inbound.get_nowait())
            except queue.Empty:
                return out

    def publish(self, serial: str, topic: str, payload: str) -> None:
        """Publish `payload` on the vehicle's `topic` with the topic's QoS and retain flag."""
        qos, retain = OUTBOUND[topic]
        client = self._clients.get(serial if self.mode == "per-vehicle" else "")
        if client is not None and self._loop is not None:
            self._loop.send(client, self.topics.topic(serial, topic), payload, qos, retain)
            self.counts[topic] += 1

    def cut(self, serial: str) -> bool:
        """Break vehicle `serial`'s session without a goodbye, so that the broker sends its last
        will (CONNECTIONBROKEN), until `restore`; False (nothing done) in shared mode."""
        client = self._clients.get(serial) if self.mode == "per-vehicle" else None
        if client is None or self._loop is None:
            return False
        self._loop.cut(client)
        return True

    def restore(self, serial: str) -> None:
        """Connect a cut session again (ONLINE once it is back)."""
        client = self._clients.get(serial) if self.mode == "per-vehicle" else None
        if client is not None and self._loop is not None:
            self._loop.restore(client)

    def stop(self, goodbye: Callable[[str], str] | None = None, timeout: float = 5.0) -> None:
        """Publish `goodbye(serial)` on each vehicle's connection topic (OFFLINE), then close
        the sessions cleanly (a clean disconnect sends no last will)."""
        loop = self._loop
        if loop is None:
            return
        pending: list[Any] = []
        if goodbye is not None:
            qos, retain = OUTBOUND["connection"]
            for serial in self.serials:
                client = self._clients.get(serial if self.mode == "per-vehicle" else "")
                if client is not None:
                    topic, words = self.topics.topic(serial, "connection"), goodbye(serial)
                    loop.call(_keep(pending, client, topic, words, qos, retain))
        queued = threading.Event()
        loop.call(queued.set)
        queued.wait(timeout)
        deadline = time.monotonic() + timeout
        for info in list(pending):
            with contextlib.suppress(RuntimeError, ValueError):  # not connected: the will says it
                info.wait_for_publish(max(deadline - time.monotonic(), 0.01))
        for client in self._clients.values():
            loop.disconnect(client)
        loop.stop(timeout)
        self._loop = None
        self._clients.clear()


def _keep(
    into: list[Any], client: Any, topic: str, payload: str, qos: int, retain: bool
) -> Callable[[], None]:
    """A job that publishes and keeps paho's message info (to wait for it)."""
    return lambda: into.append(client.publish(topic, payload, qos, retain))
