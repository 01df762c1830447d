"""The JavaScript clients (Foxglove's `@foxglove/ws-protocol`, `@mcap/core`), installed from the
npm registry into `tests/js/node_modules` by `.ci/run` (`npm ci`), or here on first use."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).parents[1] / "js"


@pytest.fixture(scope="session")
def js_clients() -> Path:
    """The folder of the JavaScript clients, their packages installed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are not installed")
    with (JS / ".install.lock").open("w") as lock:  # (test workers install once, in turn)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (JS / "node_modules" / "@foxglove" / "ws-protocol").is_dir():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=JS,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                pytest.skip(f"npm ci failed: {done.stderr[-500:]}")
    return JS
