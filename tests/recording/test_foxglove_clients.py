"""Live views and recordings with the clients Foxglove itself uses: `@foxglove/ws-protocol`'s
`FoxgloveClient` (Node.js), connecting late and subscribing channel by channel as Foxglove and
Lichtblick do."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fleetsim.interfaces.serving import free_port
from fleetsim.recording.schemas import foxglove

SDK = "foxglove.sdk.v1"


def fleetsim_bg(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fleetsim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def foxglove_client(
    js: Path, url: str, seconds: float, gap_ms: int = 150, subprotocol: str = SDK
) -> dict[str, Any]:
    """What `FoxgloveClient` received in `seconds` (it subscribes `gap_ms` apart)."""
    done = subprocess.run(
        ["node", str(js / "foxglove_client.js"), url, subprotocol, str(seconds), str(gap_ms)],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    assert done.stdout, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def wait_for_port(port: int, seconds: float = 60.0) -> None:
    import socket

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def scene_entities(got: dict[str, Any]) -> dict[str, Any]:
    """Every /scene entity the client received, by id (the latest)."""
    entities = {}
    for message in got["topics"].get("/scene", {}).get("messages", []):
        update = foxglove("SceneUpdate").FromString(base64.b64decode(message["data"]))
        entities.update({e.id: e for e in update.entities})
    return entities


def robot_names(got: dict[str, Any]) -> list[str]:
    messages = got["topics"].get("/fleet/robots", {}).get("messages", [])
    assert messages, f"no robot list; topics {sorted(got['topics'])}"
    return list(json.loads(base64.b64decode(messages[-1]["data"]))["names"])


def test_a_viewer_that_joins_a_live_run_late_sees_the_world(js_clients: Path) -> None:
    port = free_port()
    proc = fleetsim_bg(
        "run",
        "site_warehouse",
        "--serve",
        "--serve-port",
        str(port),
        "--rtf",
        "1",
        "--duration",
        "60",
    )
    try:
        wait_for_port(port)
        time.sleep(4.0)  # the static world and the robot list went out long ago
        got = foxglove_client(js_clients, f"ws://127.0.0.1:{port}", 4.0)
        entities = scene_entities(got)
        assert "static" in entities and len(entities["static"].cubes) >= 5  # floor, shelves
        assert "site" in entities and len(entities["site"].lines[0].points) > 10  # the lanes
        assert len(robot_names(got)) > 0
        assert got["topics"]["/fleet"]["count"] > 5  # and the run goes on
    finally:
        proc.kill()
        proc.wait(10)


def test_a_served_replay_loses_nothing_at_time_zero(js_clients: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    recorded = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "run",
            "site_warehouse",
            "--duration",
            "6",
            "--record",
            str(out),
        ],
        capture_output=True,
        timeout=300,
    )
    assert recorded.returncode == 0, recorded.stderr
    port = free_port()
    proc = fleetsim_bg("replay", str(out), "--serve", "--port", str(port), "--speed", "1")
    try:
        wait_for_port(port)
        got = foxglove_client(js_clients, f"ws://127.0.0.1:{port}", 5.0, gap_ms=300)
        entities = scene_entities(got)
        assert "static" in entities and "site" in entities  # sent at t = 0, before /scene's turn
        assert len(robot_names(got)) > 0
        assert got["topics"]["/fleet"]["count"] > 5
    finally:
        proc.kill()
        proc.wait(10)


def test_the_subprotocols_a_viewer_may_offer(js_clients: Path) -> None:
    """foxglove-sdk speaks `foxglove.sdk.v1` (current Foxglove and Lichtblick); a client that
    offers only the old `foxglove.websocket.v1` (the npm client's default) is refused with
    HTTP 400 at the handshake, never left hanging."""
    port = free_port()
    proc = fleetsim_bg(
        "run", "warehouse", "--serve", "--serve-port", str(port), "--rtf", "1", "--duration", "60"
    )
    try:
        wait_for_port(port)
        good = foxglove_client(js_clients, f"ws://127.0.0.1:{port}", 2.0)
        assert good["topics"]["/fleet"]["count"] > 0
        old = foxglove_client(
            js_clients, f"ws://127.0.0.1:{port}", 5.0, subprotocol="foxglove.websocket.v1"
        )
        assert "400" in old["error"] and "sec-websocket-protocol" in old["error"], old
    finally:
        proc.kill()
        proc.wait(10)


def test_foxglove_sees_the_people_of_a_live_run(js_clients: Path) -> None:
    """`/people` (a SceneUpdate, a cylinder a person) as Foxglove's own client gets it."""
    port = free_port()
    proc = fleetsim_bg("run", "warehouse_shift", "--serve", "--serve-port", str(port), "--rtf",
                       "2", "--duration", "120")  # fmt: skip
    try:
        wait_for_port(port)
        got = foxglove_client(js_clients, f"ws://127.0.0.1:{port}", 4.0)
        messages = got["topics"].get("/people", {}).get("messages", [])
        assert messages, f"no /people; topics {sorted(got['topics'])}"
        update = foxglove("SceneUpdate").FromString(base64.b64decode(messages[-1]["data"]))
        [entity] = update.entities
        assert entity.id == "people" and len(entity.cylinders) == 30  # the early shift
        assert all(c.size.z == 1.7 for c in entity.cylinders)
    finally:
        proc.kill()
        proc.wait(10)
