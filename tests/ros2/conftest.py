"""ROS 2 tests: real rclpy in separate processes, on loopback only, each test in a ROS 2
domain of its own that no other test worker holds (a lock file per domain)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 (pip install 'fleetsim[ros2]') is not here")

from fleetsim.interfaces.ros2 import loopback_environment  # noqa: E402

CLIENT = Path(__file__).with_name("client.py")


@pytest.fixture
def ros_domain() -> Iterator[int]:
    """A ROS 2 domain id held by this test alone (not 42: the ROS 2 example's, which the
    examples' test runs beside these)."""
    ids = [domain for domain in range(10, 100) if domain != 42]
    random.shuffle(ids)
    for domain in ids:
        lock = open(Path(tempfile.gettempdir()) / f"fleetsim-ros-domain-{domain}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        try:
            yield domain
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
        return
    pytest.fail("no free ROS 2 domain")


class Client:
    """`client.py` running in its own process (started at once; `result()` waits for it)."""

    def __init__(self, domain: int, asked: dict[str, Any]) -> None:
        env = {**os.environ, **loopback_environment(domain)}
        self.process = subprocess.Popen(
            [sys.executable, str(CLIENT), json.dumps(asked)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def result(self, timeout: float = 60) -> dict[str, Any]:
        try:
            out, err = self.process.communicate(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        assert self.process.returncode == 0, err
        answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return answer
