"""Shared pieces of the benchmark scripts: timing steps and writing results with their context."""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from fleetsim import MultiRobotSimulationCore


def median_step_ms(sim: MultiRobotSimulationCore, steps: int, warmup: int) -> float:
    """Median wall milliseconds of `sim.step_once()` over `steps` steps, after `warmup` steps."""
    for _ in range(warmup):
        sim.step_once()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        sim.step_once()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def write_json(path: Path, results: list[dict[str, Any]]) -> None:
    """Results plus the date, machine and Python version they were measured with."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.platform(),
        "python": platform.python_version(),
    }
    path.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
