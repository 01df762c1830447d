"""Long commands stop on Ctrl-C (SIGINT) even when started the way a script starts a
background job, with SIGINT ignored (POSIX shells hand it down so; so do pytest-xdist's
workers): each puts Python's handler back, as `fleetsim run` does."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

LAPS = Path(__file__).parents[2] / "examples" / "12_fuzz" / "laps.yaml"


def started_ignoring_sigint(args: list[str], folder: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fleetsim", *args],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )


def stopped_by_ctrl_c(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    try:  # (at once: not after the run a worker is in the middle of)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    return err


def test_fuzz_stops_on_ctrl_c(tmp_path: Path) -> None:
    stops = {"robots": [{"type": "stop", "rate_per_hour": 60, "duration": [4, 12]}]}
    proc = started_ignoring_sigint(
        ["fuzz", str(LAPS), "--runs", "1", "--workers", "1", "--duration", "100000",
         "--faults", json.dumps(stops), "--out", "f.parquet"],
        tmp_path,
    )  # fmt: skip
    time.sleep(10)  # (its worker is in the middle of a run that would last hours)
    assert "nothing written" in stopped_by_ctrl_c(proc)


def test_replay_serving_stops_on_ctrl_c(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", "warehouse", "--duration", "3", "--record",
         "run.mcap"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = started_ignoring_sigint(["replay", "run.mcap", "--serve", "--port", str(port)], tmp_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.2)
    stopped_by_ctrl_c(proc)
