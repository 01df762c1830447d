"""The hospital's doors and lifts as Open-RMF publishes them, driven by RMF's own request
messages from real rclpy in another process, through the `fleetsim ros2` command."""

from __future__ import annotations

import subprocess
import sys

from .conftest import Client

CLOSED, MOVING, OPEN = 0, 1, 2
AGV_MODE, END_SESSION = 1, 0


def test_doors_and_lifts_as_rmf_drives_them(ros_domain: int) -> None:
    client = Client(ros_domain, {
        "seconds": 20, "doors": True, "lifts": True,
        "door_requests": [[3.0, "L1_door", "tester", OPEN], [3.0, "no_such_door", "tester", OPEN]],
        "lift_requests": [[3.0, "LiftA", "tester", AGV_MODE, "L3"],
                          [3.0, "LiftB", "tester", AGV_MODE, "L9"]],
    })  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "ros2", "hospital", "--domain-id", str(ros_domain),
         "--duration", "36", "--rtf", "3"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "door request dropped" in done.stderr and "no_such_door" in done.stderr
    assert "lift request dropped" in done.stderr and "L9" in done.stderr
    heard = client.result()["heard"]
    door = [mode for name, mode in heard["doors"] if name == "L1_door"]
    assert door[0] == CLOSED and door[-1] == OPEN
    assert door.index(MOVING) < door.index(OPEN)  # (closed, then moving, then open)
    assert {name for name, _ in heard["doors"]} == {"L1_door", "L2_door", "L3_door"}
    lift = [s for s in heard["lifts"] if s[0] == "LiftA"]
    assert lift[0][1] == "L1" and lift[0][5] == ""  # (no session yet)
    up = [s for s in lift if s[4] == 1]  # MOTION_UP
    assert up and all(s[5] == "tester" and s[2] == "L3" and s[3] == CLOSED for s in up)
    assert lift[-1][1:] == ["L3", "L3", OPEN, 0, "tester"]  # there, its doors open, stopped
    assert all(s[1] == "L1" for s in heard["lifts"] if s[0] == "LiftB")  # (L9: dropped)
