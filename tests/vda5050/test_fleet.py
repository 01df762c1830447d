"""Simulated robots as VDA 5050 vehicles on a real broker (embedded, 127.0.0.1): a master
control sees them come ONLINE, sends an order and sees the vehicle drive it in its states,
cancels it, gets the standard's errors for bad input, and sees OFFLINE when the fleet stops."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from fleetsim import Agent, ConfigError, MultiRobotSimulationCore, Pose
from fleetsim.interfaces.vda5050.broker import MosquittoBroker
from fleetsim.interfaces.vda5050.fleet import VdaFleet

from ..conftest import make_sim
from .conftest import BROKERS, Observer
from .helpers import straight

PREFIX = "uagv/v2/fleetsim"


def states(observer: Observer, serial: str) -> list[dict[str, Any]]:
    return [json.loads(p) for p in observer.payloads(f"{PREFIX}/{serial}/state")]


def run_until(
    sim: MultiRobotSimulationCore, observer: Observer, check: Any, timeout: float = 30.0
) -> Any:
    """Step the simulation until `check()` holds, pausing a little each step so the broker
    and the MQTT threads get their turn (a loaded machine delivers late, not never)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sim.step_once()
        found = check()
        if found:
            return found
        time.sleep(0.005)
    raise AssertionError(f"not reached; last messages {observer.seen[-3:]}")


def test_a_master_control_drives_a_vehicle_through_the_broker(broker: Any) -> None:
    observer = Observer(broker)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 3.0 * k, 0), sim_core=sim, name=f"amr_{k}"
            )
            for k in range(2)
        ]
        fleet = VdaFleet(sim, robots, broker.url, state_interval=1.0).start()
        try:
            for serial in ("amr_0", "amr_1"):
                topic = f"{PREFIX}/{serial}/connection"
                online = observer.wait_for(lambda t=topic: observer.payloads(t))
                message = json.loads(online[-1])
                assert message["connectionState"] == "ONLINE" and message["serialNumber"] == serial
            order = straight(["n0", "n1", "n2"], released=3)
            observer.client.publish(f"{PREFIX}/amr_0/order", order.to_json())
            first = run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_0") if s["orderId"] == "o1"],
            )
            assert [n["nodeId"] for n in first[0]["nodeStates"]] == ["n1", "n2"]
            done = run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_0") if s["lastNodeId"] == "n2"],
            )
            assert done[-1]["nodeStates"] == [] and done[-1]["agvPosition"]["x"] > 5.7
            headers = [s["headerId"] for s in states(observer, "amr_0")]
            assert headers == sorted(headers) and len(set(headers)) == len(headers)
            assert all(s["lastNodeId"] == "" for s in states(observer, "amr_1"))  # untouched
            # Bad input: answered in the state, the simulation runs on.
            observer.client.publish(f"{PREFIX}/amr_1/order", b"{oops")
            bad = run_until(
                sim, observer, lambda: [s for s in states(observer, "amr_1") if s["errors"]]
            )
            assert bad[-1]["errors"][0]["errorType"] == "validationError"
            cancel = {
                "headerId": 0,
                "timestamp": "2026-11-23T10:00:00.00Z",
                "version": "2.0.0",
                "manufacturer": "fleetsim",
                "serialNumber": "amr_1",
                "actions": [
                    {"actionType": "cancelOrder", "actionId": "c1", "blockingType": "HARD"},
                    {"actionType": "selfDestruct", "actionId": "c2", "blockingType": "NONE"},
                ],
            }
            observer.client.publish(f"{PREFIX}/amr_1/instantActions", json.dumps(cancel))
            answered = run_until(
                sim,
                observer,
                lambda: [
                    s
                    for s in states(observer, "amr_1")
                    if {a["actionId"] for a in s["actionStates"]} >= {"c1", "c2"}
                ],
            )
            kinds = [e["errorType"] for e in answered[-1]["errors"]]
            assert "noOrderToCancel" in kinds and "unsupportedActionError" in kinds
            assert {a["actionStatus"] for a in answered[-1]["actionStates"]} == {"FAILED"}
        finally:
            fleet.stop()
    topic = f"{PREFIX}/amr_0/connection"
    said = observer.wait_for(
        lambda: (
            [json.loads(p)["connectionState"] for p in observer.payloads(topic)][-1:] == ["OFFLINE"]
        )
    )
    assert said
    observer.close()


def test_visualization_messages_at_their_rate(broker: Any) -> None:
    observer = Observer(broker)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(1, 2, 0), sim_core=sim, name="amr_5")
        with pytest.raises(ConfigError, match="visualization_rate >= 0 Hz"):
            VdaFleet(sim, [robot], broker.url, visualization_rate=-1)
        fleet = VdaFleet(sim, [robot], broker.url, visualization_rate=5.0).start()
        try:
            topic = f"{PREFIX}/amr_5/visualization"
            for _ in range(20):  # 2 simulated seconds: 10 messages at 5 Hz
                sim.step_once()
            seen = observer.wait_for(
                lambda: len(observer.payloads(topic)) >= 10 and observer.payloads(topic)
            )
        finally:
            fleet.stop()
    messages = [json.loads(p) for p in seen]
    assert len(messages) == 10 and [m["headerId"] for m in messages] == list(range(10))
    assert messages[0]["agvPosition"]["x"] == pytest.approx(1.0)
    assert messages[0]["agvPosition"]["y"] == pytest.approx(2.0)
    observer.close()


def test_factsheet_instant_actions_and_battery_through_the_broker(broker: Any) -> None:
    observer = Observer(broker)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_9", max_linear_vel=2.0
        )
        fleet = VdaFleet(sim, [robot], broker.url).start()
        try:
            sheet_topic = f"{PREFIX}/amr_9/factsheet"
            sheet = json.loads(observer.wait_for(lambda: observer.payloads(sheet_topic))[-1])
            assert sheet["physicalParameters"]["speedMax"] == 2.0  # sent on connect
            instant = {
                "headerId": 1,
                "timestamp": "2026-11-23T10:00:00.00Z",
                "version": "2.0.0",
                "manufacturer": "fleetsim",
                "serialNumber": "amr_9",
                "actions": [
                    {"actionType": "factsheetRequest", "actionId": "f1", "blockingType": "NONE"},
                    {
                        "actionType": "wait",
                        "actionId": "w1",
                        "blockingType": "SOFT",
                        "actionParameters": [{"key": "duration", "value": 0.5}],
                    },
                    {
                        "actionType": "initPosition",
                        "actionId": "i1",
                        "blockingType": "HARD",
                        "actionParameters": [
                            {"key": "x", "value": 2.0},
                            {"key": "y", "value": 1.0},
                            {"key": "theta", "value": 0.0},
                            {"key": "lastNodeId", "value": "n0"},
                        ],
                    },
                ],
            }
            observer.client.publish(f"{PREFIX}/amr_9/instantActions", json.dumps(instant))
            done = run_until(
                sim,
                observer,
                lambda: [
                    s
                    for s in states(observer, "amr_9")
                    if {a["actionId"]: a["actionStatus"] for a in s["actionStates"]}.get("w1")
                    == "FINISHED"
                ],
            )
            statuses = {a["actionId"]: a["actionStatus"] for a in done[-1]["actionStates"]}
            assert statuses == {"f1": "FINISHED", "w1": "FINISHED", "i1": "FINISHED"}
            assert done[-1]["agvPosition"]["x"] == pytest.approx(2.0)
            assert done[-1]["lastNodeId"] == "n0"
            seen_w1 = {
                a["actionStatus"]
                for s in states(observer, "amr_9")
                for a in s["actionStates"]
                if a["actionId"] == "w1"
            }
            assert {"INITIALIZING", "RUNNING", "FINISHED"} <= seen_w1
            assert len(observer.payloads(sheet_topic)) >= 2  # and again on request
            order = straight(["n0", "n1", "n2"], released=3)
            for node in order.nodes:
                assert node.node_position is not None
                node.node_position.x += 2.0
                node.node_position.y += 1.0
            observer.client.publish(f"{PREFIX}/amr_9/order", order.to_json())
            driven = run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_9") if s["lastNodeId"] == "n2"],
            )
            battery = driven[-1]["batteryState"]
            assert 99.0 < battery["batteryCharge"] < 100.0 and battery["charging"] is False
        finally:
            fleet.stop()
    observer.close()


EMBEDDED = (
    "import sys, time\n"
    "from fleetsim.interfaces.vda5050.broker import EmbeddedBroker\n"
    "EmbeddedBroker(port=int(sys.argv[1])).start()\n"
    "print('up', flush=True)\n"
    "time.sleep(600)\n"
)


class BrokerProcess:
    """A broker in a process of its own, on a fixed port, that can die and come back."""

    def __init__(self, kind: str) -> None:
        self.kind, self.host = kind, "127.0.0.1"
        self.port = MosquittoBroker().port  # a free port
        self.url = f"mqtt://{self.host}:{self.port}"
        self._proc: Any = None

    def start(self) -> BrokerProcess:
        if self.kind == "mosquitto":
            self._proc = MosquittoBroker(port=self.port).start()
            return self
        self._proc = subprocess.Popen(
            [sys.executable, "-c", EMBEDDED, str(self.port)], stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout.readline().strip() == "up"
        return self

    def kill(self) -> None:
        if self.kind == "mosquitto":
            self._proc.stop()
        else:
            self._proc.kill()
            self._proc.wait(10)


@pytest.mark.parametrize("kind", BROKERS)
def test_a_broker_that_goes_away_and_comes_back(kind: str) -> None:
    """The sessions reconnect with backoff, say ONLINE again and take orders again; the
    simulation steps on meanwhile."""
    broker = BrokerProcess(kind).start()
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_4")
        fleet = VdaFleet(sim, [robot], broker.url).start()
        try:
            broker.kill()
            for _ in range(20):  # the simulation does not wait for the network
                sim.step_once()
            broker.start()
            observer = Observer(broker)
            topic = f"{PREFIX}/amr_4/connection"
            online = run_until(
                sim,
                observer,
                lambda: [
                    p
                    for p in observer.payloads(topic)
                    if json.loads(p)["connectionState"] == "ONLINE"
                ],
            )
            assert online
            observer.client.publish(
                f"{PREFIX}/amr_4/order", straight(["n0", "n1"], released=2).to_json()
            )
            run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_4") if s["lastNodeId"] == "n1"],
            )
            observer.close()
        finally:
            fleet.stop()
            broker.kill()


def test_a_message_is_answered_by_a_state_at_once(broker: Any) -> None:
    """An order gets its state in the step that applies it, not at the next periodic one."""
    observer = Observer(broker)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 3.0 * k, 0), sim_core=sim, name=f"amr_{20 + k}"
            )
            for k in range(2)
        ]
        fleet = VdaFleet(sim, robots, broker.url, state_interval=1000.0).start()
        try:
            order = straight(["n0", "n1"], released=2)
            for node in order.nodes:
                assert node.node_position is not None
                node.node_position.y = 3.0
            observer.client.publish(f"{PREFIX}/amr_21/order", order.to_json())
            first = run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_21") if s["orderId"] == "o1"],
            )
            # the periodic state of amr_21 is 500 s away: this one answered the order
            assert first[0]["driving"] is True and first[0]["lastNodeId"] == "n0"
            assert [n["nodeId"] for n in first[0]["nodeStates"]] == ["n1"]  # not yet there
        finally:
            fleet.stop()
    observer.close()


def test_a_flood_of_bad_messages_leaves_the_vehicle_working(broker: Any) -> None:
    """600 malformed or invalid messages: each answered, the errors kept bounded, the
    simulation stepping on; a good order afterwards is driven; nodes on another map refused."""
    observer = Observer(broker)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_30")
        fleet = VdaFleet(sim, [robot], broker.url).start()
        try:
            topic = f"{PREFIX}/amr_30/order"
            for k in range(300):
                observer.client.publish(topic, b"\xff{not json" if k % 2 else b"[1, 2]")
                observer.client.publish(f"{PREFIX}/amr_30/instantActions", b'{"actions": 5}')
            vehicle = fleet.vehicles["amr_30"]
            start = sim.sim_time
            run_until(
                sim,
                observer,
                lambda: (
                    fleet.link.counts["order"] >= 300
                    and fleet.link.counts["instantActions"] >= 300
                    and not fleet.link.inbound.qsize()
                ),
            )
            sim.step_once()
            assert sim.sim_time > start and len(vehicle.errors) == 50  # the newest kept
            assert {e.error_type for e in vehicle.errors} == {"validationError"}
            away = straight(["n0", "n1"], released=2)
            for node in away.nodes:
                assert node.node_position is not None
                node.node_position.map_id = "level_2"
            observer.client.publish(topic, away.to_json())
            refused = run_until(
                sim,
                observer,
                lambda: [
                    s
                    for s in states(observer, "amr_30")
                    if any("another map" in e.get("errorDescription", "") for e in s["errors"])
                ],
            )
            assert refused[-1]["errors"][-1]["errorType"] == "noRouteError"
            observer.client.publish(topic, straight(["n0", "n1"], released=2).to_json())
            done = run_until(
                sim,
                observer,
                lambda: [s for s in states(observer, "amr_30") if s["lastNodeId"] == "n1"],
            )
            assert done[-1]["errors"] == []  # a new order clears the warnings
        finally:
            fleet.stop()
    observer.close()
