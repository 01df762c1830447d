"""Brokers for the VDA 5050 tests, each on 127.0.0.1 and a free port: the embedded one always,
Debian's Mosquitto as well where it is installed (CI installs it), or the one a site runs
(`real_broker`); and a master control's view of the traffic (`Observer`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from fleetsim.interfaces.vda5050.broker import EmbeddedBroker, MosquittoBroker
from fleetsim.interfaces.vda5050.topics import Topics

TOPICS = Topics("uagv", "2.0", "fleetsim")
BROKERS = [
    "embedded",
    pytest.param(
        "mosquitto",
        marks=pytest.mark.skipif(
            not MosquittoBroker.available(), reason="mosquitto is not installed"
        ),
    ),
]


@pytest.fixture(scope="module", params=BROKERS)
def broker(request: pytest.FixtureRequest) -> Iterator[Any]:
    kind = EmbeddedBroker if request.param == "embedded" else MosquittoBroker
    with kind() as b:
        yield b


@pytest.fixture(scope="module")
def real_broker() -> Iterator[Any]:
    """The broker a site runs (Debian's Mosquitto) where it is installed, else the embedded
    one: for the tests of an outside master client, which the broker only carries (the
    embedded broker has the fleet's and the link's tests on both)."""
    kind = MosquittoBroker if MosquittoBroker.available() else EmbeddedBroker
    with kind() as b:
        yield b


class Observer:
    """A master control's view: everything published under the prefix."""

    def __init__(
        self,
        broker: Any,
        username: str | None = None,
        password: str | None = None,
        tls_ca: str | None = None,
        prefix: str = TOPICS.prefix,
    ) -> None:
        self.seen: list[tuple[str, bytes, bool]] = []
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"mc{id(self)}")
        if username is not None:
            self.client.username_pw_set(username, password)
        if tls_ca is not None:
            self.client.tls_set(ca_certs=tls_ca)
        self.client.on_message = lambda _c, _u, m: self.seen.append((m.topic, m.payload, m.retain))
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.subscribe(f"{prefix}/#", qos=1)
        self.client.loop_start()
        # the broker has the subscription before the test publishes anything
        assert subscribed.wait(10), "the observer's subscription was not acknowledged"

    def wait_for(self, check: Callable[[], Any], timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.02)
        raise AssertionError(f"timed out; seen {self.seen[-5:]}")

    def settle(self, quiet: float = 0.3, timeout: float = 5.0) -> None:
        """Wait until nothing new has come for `quiet` seconds (messages still on their way
        from a fleet just stopped), at most `timeout`."""
        deadline = time.monotonic() + timeout
        count, since = len(self.seen), time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < quiet:
            time.sleep(0.02)
            if len(self.seen) != count:
                count, since = len(self.seen), time.monotonic()

    def payloads(self, topic: str) -> list[bytes]:
        return [p for t, p, _ in self.seen if t == topic]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
