"""The ROS 2 example: ten robots driven by a plain rclpy node in another process, each sent a
NavigateToPose goal that it completes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "14_ros2" / "main.py"


def test_the_example_node_drives_ten_robots(ros_domain: int) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--steps", "240", "--domain-id", str(ros_domain)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "goals sent: 10, succeeded: 10, odometry from 10 robots" in done.stdout, done.stdout
    assert "robots three metres on: 10 of 10" in done.stdout
