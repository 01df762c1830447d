"""Network faults on VDA 5050 messages, through a real broker: with every state dropped a
master control hears nothing; delayed states come late; duplicated ones twice; a dropped order
is never taken. Each message hit is a fault row; the same seed hits the same messages."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose
from fleetsim.errors import ConfigError
from fleetsim.faults import FaultEvent, FaultInjector, FaultPlan
from fleetsim.faults.network import MessageFate, MessageFaults
from fleetsim.interfaces.vda5050.broker import EmbeddedBroker
from fleetsim.interfaces.vda5050.fleet import VdaFleet

from ..conftest import make_sim
from ..vda5050.conftest import Observer
from ..vda5050.test_fleet import PREFIX, run_until, states
from ..vda5050.test_vehicle import straight


def test_fates_are_seeded_per_vehicle_and_topic() -> None:
    faults = MessageFaults(drop=0.1, delay=0.1, duplicate=0.05, reorder=0.05, seed=3)

    def fates(seed: int, vehicles: list[str]) -> list[str]:
        fate = MessageFate(MessageFaults(**{**faults.__dict__, "seed": seed}))
        return [fate.of(v, "state", float(t), False)[0] for t in range(500) for v in vehicles]

    first = fates(3, ["a"])
    assert first == fates(3, ["a"]) and first != fates(4, ["a"])
    assert fates(3, ["a", "b"])[::2] == first  # another vehicle does not change a's
    counts = Counter(first)
    assert 25 < counts["drop"] < 80 and 25 < counts["delay"] < 80 and counts["ok"] > 300
    only = MessageFate(MessageFaults(drop=1.0, topics=("order",), inbound=True, outbound=False))
    assert only.of("a", "state", 0.0, False) == ("ok", [0.0])
    assert only.of("a", "order", 0.0, False) == ("ok", [0.0])  # outbound: off
    assert only.of("a", "order", 0.0, True) == ("drop", [])
    with pytest.raises(ConfigError, match="drop is a probability"):
        MessageFaults(drop=2.0)


def serve(sim: MultiRobotSimulationCore, broker: Any, network: MessageFaults) -> VdaFleet:
    robots = [Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_0")]
    return VdaFleet(sim, robots, broker.url, state_interval=0.5, network=network).start()


def test_states_dropped_delayed_and_duplicated() -> None:
    with EmbeddedBroker() as broker:
        observer = Observer(broker)
        try:
            with make_sim(timestep=0.1) as sim:
                fleet = serve(sim, broker, MessageFaults(drop=1.0, topics=("state",)))
                injector = FaultInjector(sim, [], FaultPlan()).attach()
                for _ in range(30):  # 3 s: six states due, all dropped
                    sim.step_once()
                assert observer.wait_for(lambda: observer.payloads(f"{PREFIX}/amr_0/connection"))
                assert states(observer, "amr_0") == []
                assert fleet.network_counts["drop"] >= 6
                rows = [r for r in injector.rows() if r["kind"] == "message_drop"]
                assert len(rows) == fleet.network_counts["drop"] and rows[0]["topic"] == "state"
                fleet.stop()
            with make_sim(timestep=0.1) as sim:
                fleet = serve(
                    sim, broker, MessageFaults(delay=1.0, delay_s=(2.0, 2.0), topics=("state",))
                )
                for _ in range(15):  # 1.5 s: nothing out yet (each state is 2 s late)
                    sim.step_once()
                assert states(observer, "amr_0") == []
                run_until(sim, observer, lambda: states(observer, "amr_0"))
                assert sim.sim_time >= 2.0
                fleet.stop()
            observer.settle()  # (the last run's states still on their way, then a clean slate)
            observer.seen.clear()
            with make_sim(timestep=0.1) as sim:
                fleet = serve(sim, broker, MessageFaults(duplicate=1.0, topics=("state",)))

                def twice() -> Counter[int]:
                    return Counter(s["headerId"] for s in states(observer, "amr_0"))

                run_until(sim, observer, lambda: sum(n == 2 for n in twice().values()) >= 3)
                headers = twice()
                newest = max(headers)  # (its second copy may be on its way still)
                assert {n for h, n in headers.items() if h != newest} == {2}  # every state twice
                assert headers[newest] in (1, 2)
                fleet.stop()
        finally:
            observer.close()


def test_a_dropped_order_is_never_taken() -> None:
    with EmbeddedBroker() as broker:
        observer = Observer(broker)
        try:
            with make_sim(timestep=0.1) as sim:
                fleet = serve(sim, broker, MessageFaults(drop=1.0, topics=("order",)))
                observer.wait_for(lambda: observer.payloads(f"{PREFIX}/amr_0/connection"))
                order = straight(["n0", "n1"], released=2)
                observer.client.publish(f"{PREFIX}/amr_0/order", order.to_json())
                run_until(sim, observer, lambda: fleet.network_counts["drop"] >= 1)
                for _ in range(20):
                    sim.step_once()
                assert all(s["orderId"] == "" for s in states(observer, "amr_0"))
                assert json.loads(observer.payloads(f"{PREFIX}/amr_0/state")[-1])["errors"] == []
                fleet.stop()
        finally:
            observer.close()


@pytest.mark.parametrize("kind", ["embedded", "mosquitto"])
def test_a_disconnected_vehicle_leaves_its_last_will_and_comes_back(kind: str) -> None:
    from fleetsim.interfaces.vda5050.broker import MosquittoBroker

    if kind == "mosquitto" and not MosquittoBroker.available():
        pytest.skip("mosquitto is not installed")
    broker_class = EmbeddedBroker if kind == "embedded" else MosquittoBroker
    with broker_class() as broker:
        observer = Observer(broker)
        topic = f"{PREFIX}/amr_0/connection"

        def said() -> list[str]:
            return [json.loads(p)["connectionState"] for p in observer.payloads(topic)]

        try:
            with make_sim(timestep=0.1) as sim:
                robots = [
                    Agent.from_urdf(
                        "mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="amr_0"
                    )
                ]
                fleet = VdaFleet(sim, robots, broker.url).start()
                plan = FaultPlan(events=(FaultEvent(1.0, "disconnect", "amr_0", 3.0),))
                injector = FaultInjector(sim, robots, plan).attach()
                observer.wait_for(lambda: said()[-1:] == ["ONLINE"])
                run_until(sim, observer, lambda: "CONNECTIONBROKEN" in said())  # the will
                assert 1.0 <= sim.sim_time < 4.0
                run_until(sim, observer, lambda: said()[-1:] == ["ONLINE"] and sim.sim_time > 4)
                assert said().count("ONLINE") >= 2  # back after the fault
                assert injector.kpis()["faults"]["disconnect"] == 1
                fleet.stop()
        finally:
            observer.close()


def test_rmf_answers_refused_and_delayed() -> None:
    import time
    import urllib.error
    import urllib.request

    from fleetsim.interfaces.rmf.fleet import RmfFleet
    from fleetsim.interfaces.rmf.server import RmfServer, make_app

    def get(url: str) -> tuple[int, dict[str, Any], float]:
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status, json.loads(response.read()), time.monotonic() - t0
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read()), time.monotonic() - t0

    with make_sim(timestep=0.1) as sim:
        robots = [Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="r1")]
        fleet = RmfFleet(sim, robots).start()
        injector = FaultInjector(sim, robots, FaultPlan()).attach()
        refuse = MessageFaults(drop=1.0, topics=("status",))
        with RmfServer(make_app(fleet, faults=refuse)) as server:
            code, body, _ = get(f"{server.url}/status/?robot_name=r1")
            assert code == 503 and body["success"] is False and "network fault" in body["msg"]
            code, body, _ = get(f"{server.url}/action_paths/?activity=x&label=y")
            assert code == 200  # another endpoint: untouched
            sim.step_once()  # the fault rows reach the simulation at its next step
            assert [r["kind"] for r in injector.rows()] == ["answer_refuse"]
        slow = MessageFaults(delay=1.0, delay_s=(0.6, 0.6), topics=("status",))
        with RmfServer(make_app(fleet, faults=slow)) as server:
            code, body, took = get(f"{server.url}/status/?robot_name=r1")
            assert code == 200 and body["data"]["robot_name"] == "r1" and took >= 0.55
        fleet.stop_serving()
