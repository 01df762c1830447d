"""`fleetsim rmf` as a user runs it: a subprocess serving a scenario on 127.0.0.1; a client
drives a robot with curl-like requests, and SIGTERM ends it with the summary."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ..conftest import scenario

SCENARIO = """
simulation: {timestep: 0.05}
robots:
  - {name: tinyRobot, model: mobile_robot, grid: {count: 2, spacing: 3.0}}
"""


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_the_command_serves_until_sigterm(tmp_path: Path) -> None:
    path = scenario(tmp_path, SCENARIO)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "rmf", str(path), "--port", "0", "--rtf", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"fleet manager (http://127\.0\.0\.1:\d+/open-rmf/rmf_demos_fm)/", line)
        assert found, line + (proc.stderr.read() if proc.poll() is not None else "")
        base = found.group(1)
        robots = get(f"{base}/status/")["all_robots"]
        assert [r["robot_name"] for r in robots] == ["tinyRobot_0", "tinyRobot_1"]
        assert robots[0]["map_name"] == "L1"
        body = json.dumps({"map_name": "L1", "destination": {"x": 2.0, "y": 0.0, "yaw": 0.0},
                           "speed_limit": 0.0}).encode()  # fmt: skip
        request = urllib.request.Request(f"{base}/navigate/?robot_name=tinyRobot_0&cmd_id=5",
                                         data=body, method="POST",
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["success"] is True
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = get(f"{base}/status/?robot_name=tinyRobot_0")["data"]
            if state["last_completed_request"] == 5:
                break
            time.sleep(0.05)
        assert state["last_completed_request"] == 5
        assert abs(state["position"]["x"] - 2.0) < 0.06
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "stopped           │ by SIGTERM" in out
    finally:
        proc.kill()
        proc.wait(10)
