"""The software under test sees the faults where it would see them in the field: a broken-down
VDA 5050 vehicle reports a FATAL `breakdown` error in its state while it lasts, and a
localisation jump moves the position a vehicle (or an RMF robot) reports, not its body."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from fleetsim import Agent, Pose
from fleetsim.faults import FaultEvent, FaultInjector, FaultPlan
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.vda5050.broker import EmbeddedBroker
from fleetsim.interfaces.vda5050.fleet import VdaFleet

from ..conftest import make_sim
from ..vda5050.conftest import TOPICS, Observer

PLAN = FaultPlan(
    events=(
        FaultEvent(1.0, "breakdown", "amr_0", 3.0),
        FaultEvent(1.0, "jump", "amr_1", 3.0, 2.0, math.pi / 2),
    )
)


def states(observer: Observer, serial: str) -> list[dict[str, Any]]:
    return [json.loads(p) for p in observer.payloads(TOPICS.topic(serial, "state"))]


def test_a_vda5050_master_sees_a_breakdown_and_a_jump() -> None:
    with EmbeddedBroker() as broker, make_sim(timestep=0.1, target_rtf=0.0) as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 3.0 * k, 0), sim_core=sim, name=f"amr_{k}"
            )
            for k in range(2)
        ]
        observer = Observer(broker)
        fleet = VdaFleet(sim, robots, broker.url, state_interval=0.5).start()
        FaultInjector(sim, robots, PLAN).attach()
        try:
            for _ in range(20):  # 2 s: both faults on
                sim.step_once()
            during0 = observer.wait_for(
                lambda: [s for s in states(observer, "amr_0") if s["errors"]]
            )
            error = during0[-1]["errors"][0]
            assert error["errorType"] == "breakdown" and error["errorLevel"] == "FATAL"
            jumped = observer.wait_for(
                lambda: [s for s in states(observer, "amr_1") if s["agvPosition"]["y"] > 4.5]
            )
            assert jumped[-1]["agvPosition"]["y"] == pytest.approx(3.0 + 2.0, abs=1e-6)
            assert robots[1].get_pose().y == pytest.approx(3.0, abs=1e-9)  # the body did not
            for _ in range(30):  # 5 s: both over
                sim.step_once()
            observer.wait_for(lambda: states(observer, "amr_0")[-1]["errors"] == [])
            observer.wait_for(
                lambda: abs(states(observer, "amr_1")[-1]["agvPosition"]["y"] - 3.0) < 1e-6
            )
        finally:
            fleet.stop()
            observer.close()


def test_an_rmf_robots_status_jumps_with_its_localisation() -> None:
    with make_sim(timestep=0.1) as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 3.0 * k, 0), sim_core=sim, name=f"amr_{k}"
            )
            for k in range(2)
        ]
        fleet = RmfFleet(sim, robots).start()
        FaultInjector(sim, robots, PLAN).attach()
        for _ in range(20):
            sim.step_once()
        y = fleet.board.data(1)["position"]["y"]
        assert y == pytest.approx(5.0, abs=1e-6) and fleet.board.data(0)["position"]["y"] == 0
        for _ in range(30):
            sim.step_once()
        assert fleet.board.data(1)["position"]["y"] == pytest.approx(3.0, abs=1e-6)
        fleet.stop_serving()
