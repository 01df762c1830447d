"""Live views over Foxglove's WebSocket protocol, checked with a real WebSocket client: a
recording streamed by `fleetsim replay --serve` and a running `fleetsim run --serve`."""

from __future__ import annotations

import asyncio
import json
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import websockets

import fleetsim.recording
from fleetsim.interfaces.serving import free_port
from fleetsim.recording import record
from fleetsim.recording.schemas import foxglove
from fleetsim.recording.writer import POINT

SUBPROTOCOL = "foxglove.sdk.v1"


async def watch(
    url: str, topic: str, count: int, timeout: float = 60.0
) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
    """Connect (retrying while the server starts), subscribe to `topic`, and return the
    channels advertised and `count` (log time, payload) messages."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            ws = await websockets.connect(url, subprotocols=[SUBPROTOCOL])  # type: ignore[list-item]
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    async with ws:
        channels: dict[str, Any] = {}
        while topic not in channels:
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
            if message["op"] == "advertise":
                channels.update({c["topic"]: c for c in message["channels"]})
        await ws.send(
            json.dumps(
                {
                    "op": "subscribe",
                    "subscriptions": [{"id": 1, "channelId": channels[topic]["id"]}],
                }
            )
        )
        got = []
        while len(got) < count:
            data = await asyncio.wait_for(ws.recv(), timeout)
            if isinstance(data, bytes) and data[0] == 1:  # a message: op, subscription, time
                _op, _sub, log_time = struct.unpack_from("<BIQ", data)
                got.append((log_time, data[13:]))
        return channels, got


async def first_advertisement(url: str) -> list[str]:
    """The topics of the first advertisement a viewer connecting to `url` gets."""
    async with websockets.connect(url, subprotocols=[SUBPROTOCOL]) as ws:  # type: ignore[list-item]
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message["op"] == "advertise":
                return [c["topic"] for c in message["channels"]]


def points(payload: bytes) -> np.ndarray:
    cloud = foxglove("PointCloud").FromString(payload)
    return np.frombuffer(cloud.data, dtype=POINT)


def run(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fleetsim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_replay_serve_streams_a_recording(tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    recorded = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "run",
            "crate_shuttle",
            "--duration",
            "5",
            "--record",
            str(out),
        ],
        capture_output=True,
        timeout=120,
    )
    assert recorded.returncode == 0
    port = free_port()
    proc = run("replay", str(out), "--serve", "--port", str(port), "--speed", "4")
    try:
        channels, got = asyncio.run(watch(f"ws://127.0.0.1:{port}", "/fleet", 5))
        assert {"/fleet", "/scene", "/fleet/robots", "/events"} <= set(channels)
        assert channels["/fleet"]["schemaName"] == "foxglove.PointCloud"
        assert [t for t, _ in got] == sorted(t for t, _ in got)  # in recorded order
        with fleetsim.recording.open(out) as recording:
            first = next(recording.frames())
        assert np.allclose(points(got[0][1])["x"], first.xyz[:, 0])  # frame 0, as recorded
        out_text, _err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "streamed" in out_text
    finally:
        proc.kill()
        proc.wait(10)


def test_run_serve_streams_a_live_run(tmp_path: Path) -> None:
    """A viewer of `fleetsim run --serve` gets the fleet's frames as the run goes (the run is
    long enough for a client on a loaded machine to catch it; it is stopped once watched)."""
    port = free_port()
    log = tmp_path / "run.log"  # (the run's output in a file: a pipe nobody reads could fill)
    with log.open("w") as out:
        live = ("--serve", "--serve-port", str(port), "--rtf", "2", "--duration", "120")
        proc = subprocess.Popen(
            [sys.executable, "-m", "fleetsim", "run", "warehouse", *live],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        try:
            channels, got = asyncio.run(watch(f"ws://127.0.0.1:{port}", "/fleet", 10))
        except (websockets.ConnectionClosed, TimeoutError, OSError) as exc:  # (the run said)
            said = f"the run's exit: {proc.poll()}; it said:\n{log.read_text()[-2000:]}"
            raise AssertionError(f"{exc!r}; {said}") from exc
        assert channels["/fleet"]["encoding"] == "protobuf"
        assert len(points(got[-1][1])) == 100 and got[-1][0] > got[0][0]  # time moves on
    finally:
        proc.kill()
        proc.wait(10)


def test_a_live_view_in_process_paused_and_resumed() -> None:
    """`record(sim, None, out=LiveOut(server))`: a client subscribed to `/events` gets the
    action events (made by the writer's code) after a resume, and none from the pause."""
    from fleetsim import Agent, AgentSpawnParams
    from fleetsim.actions import Wait
    from fleetsim.recording.live import FoxgloveServer, LiveOut

    from ..conftest import make_sim

    server = FoxgloveServer(port=0)
    try:
        with make_sim(timestep=0.1) as sim:
            robot = Agent.from_params(AgentSpawnParams(urdf_path="simple_cube"), sim)
            recorder = record(sim, None, out=LiveOut(server))
            got: list[tuple[int, bytes]] = []
            client = threading.Thread(
                target=lambda: got.extend(asyncio.run(watch(server.url, "/events", 1))[1])
            )
            client.start()
            assert server.subscribed.wait(30)
            recorder.pause()
            robot.add_action(Wait(0.2))
            for _ in range(5):  # ends while paused: not sent
                sim.step_once()
            recorder.resume()
            robot.name = "live1"
            robot.add_action(Wait(0.2))
            for _ in range(300):
                sim.step_once()
                if not client.is_alive():
                    break
                time.sleep(0.01)
            # while the simulation runs, not when it closes (close flushes what is left)
            assert not client.is_alive() and len(got) == 1, "no event while running"
            assert sim.sim_time < 0.5 + 1.0  # soon after the wait ended (0.2 s after resume)
            client.join(30)
    finally:
        server.stop()
    assert len(got) == 1
    event = json.loads(got[0][1])
    assert event["kind"] == "action_completed" and event["robot"] == "live1"
    assert event["action"] == "Wait" and got[0][0] == round(event["time"] * 1e9)


def test_a_server_started_after_its_channels_offers_them_as_a_viewer_connects() -> None:
    """`FoxgloveServer(start=False)` takes no connection until `start()`, and a viewer that
    connects then is offered the channels made before in the advertisement it gets first (a
    channel made while a viewer is connected can be refused to it for a moment by the SDK:
    "Unknown channel ID")."""
    from fleetsim.recording.live import FoxgloveServer

    server = FoxgloveServer(port=0, start=False)
    try:
        assert server.server is None
        schema = json.dumps({"title": "Note", "type": "object"}).encode()
        server.channel("/note", "Note", "jsonschema", schema)
        server.start()
        server.start()  # (once)
        assert asyncio.run(first_advertisement(server.url)) == ["/note"]
    finally:
        server.stop()


def test_a_live_run_offers_the_topics_it_writes_later_as_a_viewer_connects() -> None:
    """`Recorder.make_channels` (what `fleetsim run --serve` calls before its server starts):
    the chosen robots' scans, their safety fields, the KPIs and the people are offered to a
    viewer connecting before any of them is written, and their messages then go out on those
    channels."""
    from fleetsim import Agent, Pose
    from fleetsim.recording.live import FoxgloveServer, LiveOut

    from ..conftest import make_sim

    server = FoxgloveServer(port=0, start=False)
    try:
        with make_sim(timestep=0.1) as sim:
            for k in range(2):
                robot = Agent.from_urdf("simple_cube", Pose.from_xyz(0, 2 * k, 0), sim_core=sim)
                robot.name = f"amr{k}"
                robot.add_lidar(beams=90, rate=5.0)
            robot.set_safety_fields("auto")
            sim.people.add(np.array([[5.0, 5.0]]), [np.array([[5.0, 5.0], [8.0, 5.0]])])
            recorder = record(sim, None, out=LiveOut(server))
            recorder.watch_kpis([])
            recorder.make_channels()
            server.start()
            offered = asyncio.run(first_advertisement(server.url))
            assert sim.step_count == 0  # (no scan, field or KPI made yet)
            later = {"/scan/amr0", "/scan/amr1", "/fields", "/kpi", "/people"}
            assert later <= set(offered), offered
            got: list[tuple[int, bytes]] = []
            client = threading.Thread(
                target=lambda: got.extend(asyncio.run(watch(server.url, "/scan/amr1", 1))[1])
            )
            client.start()
            assert server.subscribed.wait(30)
            for _ in range(300):
                sim.step_once()
                if not client.is_alive():
                    break
                time.sleep(0.01)
            client.join(30)
    finally:
        server.stop()
    assert len(got) == 1
    scan = foxglove("LaserScan").FromString(got[0][1])
    assert len(scan.ranges) == 90 and scan.frame_id == "world"


def test_run_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    """The live view takes connections once the run is built: a port in use is still a clear
    error, naming the address, and the run does not start."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        live = ("--serve", "--serve-port", str(port), "--duration", "5")
        done = subprocess.run(
            [sys.executable, "-m", "fleetsim", "run", "warehouse", *live],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode != 0
    assert f"--serve on 127.0.0.1:{port}" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
