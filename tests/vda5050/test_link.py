"""MQTT sessions of VDA 5050 vehicles against a real broker (the embedded amqtt, on 127.0.0.1 and
a free port): topics, retained connection messages, the last will when a vehicle process dies,
orders queued for the simulation, a clean goodbye."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fleetsim import ConfigError
from fleetsim.errors import FleetSimError
from fleetsim.interfaces.vda5050.broker import MosquittoBroker
from fleetsim.interfaces.vda5050.link import MqttLink, broker_address
from fleetsim.interfaces.vda5050.topics import Topics

from .conftest import TOPICS, Observer


def test_topics_and_broker_urls() -> None:
    assert TOPICS.topic("amr_3", "order") == "uagv/v2/fleetsim/amr_3/order"
    assert TOPICS.split("uagv/v2/fleetsim/amr_3/instantActions") == ("amr_3", "instantActions")
    assert TOPICS.split("uagv/v2/other/amr_3/order") is None
    assert Topics(version="2.1").protocol_version == "2.1.0"
    with pytest.raises(ConfigError, match=r"version must be one of 2\.0, 2\.1"):
        Topics(version="1.1")
    with pytest.raises(ConfigError, match="manufacturer 'a/b' must be a non-empty topic level"):
        Topics(manufacturer="a/b")
    assert broker_address("mqtt://127.0.0.1:1884") == ("127.0.0.1", 1884, False)
    assert broker_address("mqtts://broker.local") == ("broker.local", 8883, True)
    with pytest.raises(ConfigError, match="expected mqtt://HOST:PORT"):
        broker_address("http://x:1")


@pytest.mark.parametrize("mode", ["per-vehicle", "shared"])
def test_orders_reach_the_queue_and_states_reach_the_master(broker: Any, mode: str) -> None:
    observer = Observer(broker)
    link = MqttLink(TOPICS, ["amr_0", "amr_1"], broker.url, mode=mode)
    online: list[str] = []
    link.on_connect = online.append
    link.start()
    try:
        assert sorted(online) == ["amr_0", "amr_1"]
        link.publish("amr_1", "state", '{"x": 1}')
        observer.wait_for(lambda: observer.payloads("uagv/v2/fleetsim/amr_1/state"))
        observer.client.publish("uagv/v2/fleetsim/amr_1/order", b'{"orderId": "o1"}')
        observer.client.publish("uagv/v2/fleetsim/amr_9/order", b"{}")  # not ours: dropped
        observer.client.publish("uagv/v2/fleetsim/amr_0/instantActions", b'{"actions": []}')
        got: list[Any] = []
        observer.wait_for(lambda: got.extend(link.take()) or len(got) >= 2)
        assert sorted((m.serial, m.topic) for m in got) == [
            ("amr_0", "instantActions"),
            ("amr_1", "order"),
        ]
        assert next(m.payload for m in got if m.topic == "order") == b'{"orderId": "o1"}'
    finally:
        link.stop(goodbye=lambda serial: f"OFFLINE {serial}")
    offline = observer.wait_for(lambda: observer.payloads("uagv/v2/fleetsim/amr_0/connection"))
    assert offline[-1] == b"OFFLINE amr_0"
    observer.close()


VEHICLE = textwrap.dedent("""
    import sys, time
    from fleetsim.interfaces.vda5050.link import MqttLink
    from fleetsim.interfaces.vda5050.topics import Topics
    link = MqttLink(Topics(), ["amr_7"], sys.argv[1], will=lambda s: "CONNECTIONBROKEN " + s,
                    keepalive=2)
    link.start()
    link.publish("amr_7", "connection", "ONLINE amr_7")
    print("up", flush=True)
    time.sleep(120)
""")


def test_a_vehicle_that_dies_leaves_its_last_will(broker: Any) -> None:
    observer = Observer(broker)
    proc = subprocess.Popen(
        [sys.executable, "-c", VEHICLE, broker.url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
        topic = "uagv/v2/fleetsim/amr_7/connection"
        observer.wait_for(lambda: b"ONLINE amr_7" in observer.payloads(topic))
        os.kill(proc.pid, signal.SIGKILL)  # no goodbye: the broker speaks for it
        observer.wait_for(lambda: b"CONNECTIONBROKEN amr_7" in observer.payloads(topic))
    finally:
        proc.kill()
        proc.wait(10)
    late = Observer(broker)  # a master control that connects later sees it, retained
    retained = late.wait_for(lambda: [(p, r) for t, p, r in late.seen if t == topic])
    assert retained[-1] == (b"CONNECTIONBROKEN amr_7", True)
    late.close()
    observer.close()


def test_a_broker_that_is_not_there_is_a_clear_error() -> None:
    link = MqttLink(TOPICS, ["amr_0"], "mqtt://127.0.0.1:9")  # the discard port: refused
    with pytest.raises(Exception, match=r"could not connect 1 MQTT session\(s\) to 127.0.0.1:9"):
        link.start(timeout=1.0)


@pytest.mark.skipif(not MosquittoBroker.available(), reason="mosquitto is not installed")
def test_broker_username_and_password() -> None:
    with MosquittoBroker(username="fleet", password="s3cret") as broker:
        observer = Observer(broker, "fleet", "s3cret")
        link = MqttLink(TOPICS, ["amr_0"], broker.url, username="fleet", password="s3cret")
        link.start()
        try:
            link.publish("amr_0", "state", "{}")
            observer.wait_for(lambda: observer.payloads("uagv/v2/fleetsim/amr_0/state"))
        finally:
            link.stop()
            observer.close()
        wrong = MqttLink(TOPICS, ["amr_0"], broker.url, username="fleet", password="guess")
        with pytest.raises(FleetSimError, match="refused the MQTT session: Not authorized"):
            wrong.start(timeout=5.0)


@pytest.mark.skipif(not MosquittoBroker.available(), reason="mosquitto is not installed")
def test_tls_with_a_ca_certificate(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    with MosquittoBroker(tls=(str(cert), str(key))) as broker:
        assert broker.url.startswith("mqtts://127.0.0.1:")
        observer = Observer(broker, tls_ca=str(cert))
        link = MqttLink(TOPICS, ["amr_0"], broker.url, tls_ca=str(cert))
        link.start()
        try:
            link.publish("amr_0", "state", '{"over": "tls"}')
            said = observer.wait_for(lambda: observer.payloads("uagv/v2/fleetsim/amr_0/state"))
            assert said == [b'{"over": "tls"}']
            observer.client.publish("uagv/v2/fleetsim/amr_0/order", b"{}")
            got: list[Any] = []
            observer.wait_for(lambda: got.extend(link.take()) or got)
            assert got[0].topic == "order"
        finally:
            link.stop()
            observer.close()
        untrusted = MqttLink(TOPICS, ["amr_0"], broker.url)  # the system's CAs do not know it
        with pytest.raises(FleetSimError, match="could not connect"):
            untrusted.start(timeout=2.0)


def test_large_and_retained_messages_arrive_whole(broker: Any) -> None:
    """QoS 0 messages go out as packets written by fleetsim (not paho's publish): a 200 kB
    payload (a 3-byte length) and a retained one come through exactly."""
    link = MqttLink(TOPICS, ["amr_0"], broker.url).start()
    big = "".join(chr(0x61 + k % 26) for k in range(200_000))
    try:
        link.publish("amr_0", "factsheet", '{"retained": true}')  # QoS 0, retained
        observer = Observer(broker)
        link.publish("amr_0", "state", big)
        for k in range(300):
            link.publish("amr_0", "visualization", f'{{"k": {k}}}')
        topic = "uagv/v2/fleetsim/amr_0/visualization"
        seen = observer.wait_for(
            lambda: len(observer.payloads(topic)) >= 300 and observer.payloads(topic)
        )
        assert [int(p[6:-1]) for p in seen] == list(range(300))  # in order, none lost
        assert observer.payloads("uagv/v2/fleetsim/amr_0/state") == [big.encode()]
        observer.close()
        late = Observer(broker)  # subscribes after the factsheet went out: gets it retained
        kept = late.wait_for(
            lambda: [(p, r) for t, p, r in late.seen if t.endswith("/amr_0/factsheet")]
        )
        assert set(kept) == {(b'{"retained": true}', True)}  # (amqtt may repeat it)
        late.close()
    finally:
        link.stop()


def test_two_links_with_the_same_names_do_not_take_each_others_sessions(broker: Any) -> None:
    first = MqttLink(TOPICS, ["amr_40"], broker.url).start()
    second = MqttLink(TOPICS, ["amr_40"], broker.url).start()
    try:
        observer = Observer(broker)
        first.publish("amr_40", "state", "one")
        second.publish("amr_40", "state", "two")
        got = observer.wait_for(
            lambda: (
                len(observer.payloads("uagv/v2/fleetsim/amr_40/state")) >= 2
                and observer.payloads("uagv/v2/fleetsim/amr_40/state")
            )
        )
        assert sorted(got) == [b"one", b"two"]  # both sessions still connected
        observer.close()
    finally:
        first.stop()
        second.stop()
