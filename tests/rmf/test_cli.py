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

import pytest
import yaml

from ..conftest import scenario
from ..site.buildings import BUILDING

SCENARIO = """
simulation: {timestep: 0.05}
robots:
  - {name: tinyRobot, model: mobile_robot, grid: {count: 2, spacing: 3.0}}
"""


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def serve(path: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "rmf", str(path), "--port", "0", "--rtf", "4", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"fleet manager (http://127\.0\.0\.1:\d+/open-rmf/rmf_demos_fm)/", line)
    assert found, line + (proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    return proc, found.group(1)


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def completed(base: str, name: str, cmd_id: int) -> dict:
    """The robot's status once it reports `cmd_id` completed (30 s at most)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = get(f"{base}/status?robot_name={name}")["data"]
        if state["last_completed_request"] == cmd_id:
            return state
        time.sleep(0.05)
    raise AssertionError(f"{name} never completed {cmd_id}: {state}")


def test_the_command_serves_until_sigterm(tmp_path: Path) -> None:
    proc, base = serve(scenario(tmp_path, SCENARIO))
    try:
        robots = get(f"{base}/status/")["all_robots"]
        assert [r["robot_name"] for r in robots] == ["tinyRobot_0", "tinyRobot_1"]
        assert robots[0]["map_name"] == "L1"
        reply = post(
            f"{base}/navigate/?robot_name=tinyRobot_0&cmd_id=5",
            {"map_name": "L1", "destination": {"x": 2.0, "y": 0.0, "yaw": 0.0}, "speed_limit": 0.0},
        )
        assert reply["success"] is True
        assert abs(completed(base, "tinyRobot_0", 5)["position"]["x"] - 2.0) < 0.06
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "stopped           │ by SIGTERM" in out
    finally:
        proc.kill()
        proc.wait(10)


def test_a_building_s_robots_in_rmf_coordinates_with_the_scenario_s_activities(
    tmp_path: Path,
) -> None:
    """Robots spawn where the building says, under the names it gives, at the coordinates of
    the nav graph exported for RMF; an activity written in the scenario runs to completion."""
    (tmp_path / "test.building.yaml").write_text(BUILDING)
    path = scenario(
        tmp_path,
        """
simulation: {timestep: 0.05}
site: {file: test.building.yaml}
robots: [{model: mobile_robot, start: spawn}]
rmf:
  activities:
    clean: {zone_a: [[5.0, -5.0, 0.0], [7.0, -5.0, 0.0], [7.0, -6.0, -1.5708]]}
""",
    )
    nav = tmp_path / "nav.yaml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "site",
            "export",
            str(tmp_path / "test.building.yaml"),
            "--format",
            "rmf-nav-graph",
            "-o",
            str(nav),
        ],
        check=True,
        capture_output=True,
    )
    vertices = yaml.safe_load(nav.read_text())["levels"]["L1"]["vertices"]
    dock = next(v for v in vertices if v[2]["name"] == "dock_a")
    proc, base = serve(path)
    try:
        (robot,) = get(f"{base}/status/")["all_robots"]
        assert robot["robot_name"] == "bot1" and robot["map_name"] == "L1"
        assert (robot["position"]["x"], robot["position"]["y"]) == (
            pytest.approx(dock[0], abs=1e-6),
            pytest.approx(dock[1], abs=1e-6),
        )
        assert get(f"{base}/action_paths/?activity=clean&label=zone_a")["data"]["path"][-1] == [
            7.0,
            -6.0,
            -1.5708,
        ]
        reply = post(
            f"{base}/start_activity?robot_name=bot1&cmd_id=3",
            {"activity": "clean", "label": "zone_a"},
        )
        assert reply["success"] is True
        state = completed(base, "bot1", 3)
        assert state["position"]["x"] == pytest.approx(7.0, abs=0.06)
        assert state["position"]["y"] == pytest.approx(-6.0, abs=0.06)
        assert state["position"]["yaw"] == pytest.approx(-1.5708, abs=0.02)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_bad_rmf_section_is_refused_before_serving(tmp_path: Path) -> None:
    path = scenario(tmp_path, SCENARIO + "rmf: {activities: {clean: {zone_a: [[1.0, 2.0]]}}}\n")
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "rmf", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "fleet manager" not in done.stdout
    assert "rmf.activities.clean.zone_a" in done.stderr, done.stderr


def test_the_guides_walk_through_runs_as_written(tmp_path: Path) -> None:
    """The Open-RMF guide's walk-through (its `sh` blocks), on a free port, with this
    interpreter's fleetsim; the line that starts RMF's own adapter needs ROS and is left out."""
    import shutil
    import socket

    if shutil.which("curl") is None:
        pytest.skip("no curl")
    guide = (Path(__file__).parents[2] / "docs" / "guides" / "rmf.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", guide, re.S)
    walk = [b for b in blocks if "rmf_office" in b]
    assert len(walk) == 2, "the guide's RMF walk-through moved"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    lines = [line for block in walk for line in block.replace("\\\n", "").splitlines()]
    script = "\n".join(
        line.replace("22011", port).replace("fleetsim ", f"{sys.executable} -m fleetsim ", 1)
        for line in lines  # RMF's adapter needs ROS; the server was started in the first block
        if not line.startswith("ros2 ") and line.strip() != "fleetsim rmf rmf_office.yaml"
    )
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script  # never a server left
    done = subprocess.run(
        ["bash", "-ec", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"robot_name":"tinyRobot1"' in done.stdout.replace(" ", "")
    office = tmp_path / "office"
    nav = yaml.safe_load((office / "nav_graph.yaml").read_text())
    config = yaml.safe_load((office / "fleet_config.yaml").read_text())
    assert nav["building_name"] == "fleetsim_office"
    assert config["fleet_manager"]["port"] == int(port)
