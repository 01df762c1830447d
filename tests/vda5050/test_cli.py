"""`fleetsim vda5050` as a user runs it: a real subprocess with its embedded broker; a master
control connects to the address it prints, drives a robot, and SIGTERM ends it cleanly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fleetsim.interfaces.vda5050.broker import EmbeddedBroker, MosquittoBroker

from ..conftest import scenario
from .conftest import Observer
from .helpers import straight

SCENARIO = """
simulation: {timestep: 0.1}
robots:
  - {name: amr, model: mobile_robot, grid: {count: 2, spacing: 3.0}}
"""


def test_the_command_serves_a_scenario_until_sigterm(tmp_path: Path) -> None:
    path = scenario(tmp_path, SCENARIO)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "vda5050", str(path), "--rtf", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"broker mqtt://([\d.]+):(\d+)\s+topics (\S+)/<serialNumber>", line)
        assert found, line + (proc.stderr.read() if proc.poll() is not None else "")
        assert found.group(1) == "127.0.0.1" and found.group(3) == "uagv/v2/fleetsim"
        broker = EmbeddedBroker("127.0.0.1", int(found.group(2)))  # only its address is used
        observer = Observer(broker)
        topic = "uagv/v2/fleetsim/amr_0"
        observer.wait_for(lambda: observer.payloads(f"{topic}/connection"))
        order = straight(["n0", "n1"], released=2)
        order.serial_number = "amr_0"
        observer.client.publish(f"{topic}/order", order.to_json())
        states = f"{topic}/state"
        observer.wait_for(
            lambda: any(json.loads(p)["lastNodeId"] == "n1" for p in observer.payloads(states)), 30
        )
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "stopped           │ by SIGTERM" in out
        said = [json.loads(p)["connectionState"] for p in observer.payloads(f"{topic}/connection")]
        deadline = time.monotonic() + 5
        while said[-1] != "OFFLINE" and time.monotonic() < deadline:
            time.sleep(0.05)
            said = [
                json.loads(p)["connectionState"] for p in observer.payloads(f"{topic}/connection")
            ]
        assert said[0] == "ONLINE" and said[-1] == "OFFLINE"
        observer.close()
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.skipif(not MosquittoBroker.available(), reason="mosquitto is not installed")
def test_the_command_on_mosquitto_with_a_password_for_a_duration(tmp_path: Path) -> None:
    path = scenario(tmp_path, SCENARIO)
    with MosquittoBroker(username="fleet", password="s3cret") as broker:
        observer = Observer(broker, "fleet", "s3cret", prefix="uagv/v2/acme")
        env = {**os.environ, "FLEETSIM_MQTT_PASSWORD": "s3cret"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "fleetsim",
                "vda5050",
                str(path),
                "--broker",
                broker.url,
                "--username",
                "fleet",
                "--duration",
                "3",
                "--rtf",
                "3",
                "--manufacturer",
                "acme",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert f"broker {broker.url}  topics uagv/v2/acme/<serialNumber>" in done.stdout
        # 2 vehicles, a state each on connect... at least every simulated second for 3 s
        found = re.search(r"(\d+) states published", done.stdout)
        assert found and int(found.group(1)) >= 2 * 3, done.stdout
        said = observer.wait_for(lambda: observer.payloads("uagv/v2/acme/amr_1/connection"))
        assert json.loads(said[-1])["connectionState"] == "OFFLINE"  # retained, after the run
        sheet = observer.wait_for(lambda: observer.payloads("uagv/v2/acme/amr_1/factsheet"))
        assert json.loads(sheet[-1])["manufacturer"] == "acme"
        observer.close()
        wrong = subprocess.run(
            [
                sys.executable,
                "-m",
                "fleetsim",
                "vda5050",
                str(path),
                "--broker",
                broker.url,
                "--username",
                "fleet",
                "--password",
                "nope",
                "--duration",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert wrong.returncode != 0 and "refused the MQTT session" in wrong.stderr + wrong.stdout


def test_the_scenarios_own_drivers_are_turned_off() -> None:
    """`fleetsim vda5050 warehouse`: the master control drives, not the reference fleet manager."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "vda5050",
            "warehouse",
            "--duration",
            "2",
            "--rtf",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "vehicles 100" in done.stdout
    assert "the scenario's fleet_manager turned off" in done.stdout
    assert "actions completed │ 0" in done.stdout  # no robot was sent anywhere
