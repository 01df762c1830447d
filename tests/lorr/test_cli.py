"""`fleetsim lorr run` as users run it: a real subprocess in a working folder, the kit's output
JSON and fleetsim's results written, the kit's python/user_* folders found as the kit finds
them, clear errors for bad input and broken entries."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .kit_helpers import GO_ENTRIES, LORR

MAZE = LORR / "problems" / "maze.domain"


def _fleetsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "lorr", "run", *args, "--no-progress"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_defaults_write_the_kits_output_and_results(tmp_path: Path) -> None:
    done = _fleetsim(
        str(MAZE / "maze-example_40-delay.json"),
        "-s",
        "400",
        "--deterministic",
        "--results",
        "results.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "planner: fleetsim default" in done.stdout and "tasks finished" in done.stdout
    out = json.loads((tmp_path / "output.json").read_text())
    results = json.loads((tmp_path / "results.json").read_text())
    assert out["teamSize"] == 40 and out["makespan"] == 400 and len(out["actualPaths"]) == 40
    assert results["summary"]["tasks_finished"] == out["numTaskFinished"] > 0
    assert results["summary"]["errands_done"] == len(out["events"])
    assert len(results["robots"]) == 40
    assert sum(r["tasks_finished"] for r in results["robots"]) == out["numTaskFinished"]


def test_the_kits_entry_folders_are_found_and_match_the_kit(tmp_path: Path) -> None:
    shutil.copytree(GO_ENTRIES, tmp_path / "python")
    done = _fleetsim(
        str(MAZE / "maze-example_40-nodelay.json"),
        "-s",
        "500",
        "--deterministic",
        "-o",
        "kit.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "python/user_planner/pyMAPFPlanner.py" in done.stdout
    ours = json.loads((tmp_path / "kit.json").read_text())
    with gzip.open(LORR / "runs" / "maze-example_40-nodelay-pydet-r1.output.json.gz") as f:
        kit = json.load(f)
    for key in ("actualPaths", "events", "errors", "numTaskFinished", "delayIntervals"):
        assert ours[key] == kit[key], key


def test_bad_input_and_broken_entries_are_named(tmp_path: Path) -> None:
    missing = _fleetsim(str(tmp_path / "nope.json"), cwd=tmp_path)
    assert missing.returncode == 2 and "nope.json" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text(
        "import MAPF\n\nclass pyMAPFPlanner:\n    def initialize(self, t):\n"
        "        pass\n\n    def plan(self, t):\n        return [[9]]\n"
    )
    bad = _fleetsim(
        str(MAZE / "maze-example_40-nodelay.json"),
        "--planner",
        str(broken),
        "-s",
        "20",
        "--deterministic",
        cwd=tmp_path,
    )
    assert bad.returncode != 0
    assert "broken.py: plan at tick 0 gives robot 0 action 9" in bad.stderr
    mode = _fleetsim(str(MAZE / "maze-example_40-nodelay.json"), "--mode", "fast", cwd=tmp_path)
    assert mode.returncode == 2 and "--mode 'fast'" in mode.stderr


def test_the_bundled_problem_is_listed_copied_and_runs(tmp_path: Path) -> None:
    wide = {**os.environ, "COLUMNS": "200"}
    listed = subprocess.run(
        [sys.executable, "-m", "fleetsim", "examples"],
        capture_output=True,
        text=True,
        timeout=120,
        env=wide,
    )
    assert "warehouse_small" in listed.stdout and "LoRR problems" in listed.stdout
    copied = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "examples",
            "copy",
            "warehouse_small",
            "--to",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "warehouse_small" / "warehouse_small.map").is_file()
    by_name = _fleetsim("warehouse_small", "-s", "300", "--deterministic", cwd=tmp_path)
    by_file = _fleetsim(
        str(tmp_path / "warehouse_small" / "warehouse_small.json"),
        "-s",
        "300",
        "--deterministic",
        "-o",
        "copy.json",
        cwd=tmp_path,
    )
    assert by_name.returncode == 0 and by_file.returncode == 0, by_name.stderr + by_file.stderr
    one = json.loads((tmp_path / "output.json").read_text())
    two = json.loads((tmp_path / "copy.json").read_text())
    assert one["numTaskFinished"] > 0 and one["actualPaths"] == two["actualPaths"]
    typo = _fleetsim("warehouse_smal", cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'warehouse_small'" in typo.stderr
