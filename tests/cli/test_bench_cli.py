"""`fleetsim bench` end to end on a small fleet (timings are reported, not asserted)."""

import json
import subprocess
import sys
from pathlib import Path


def test_bench_writes_a_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "bench",
            "--sizes",
            "20,60",
            "--steps",
            "5",
            "--json",
            str(out),
            "--plot",
            str(tmp_path / "rtf.png"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    variants = {(r["n"], r["variant"]) for r in data["results"]}
    assert variants == {
        (n, v) for n in (20, 60) for v in ("fleetsim", "fleetsim-aabb", "fleetsim-eager")
    }
    assert all(r["ms_per_step"] > 0 and r["bytes_per_robot"] >= 0 for r in data["results"])
    assert "fleetsim-aabb" in result.stdout and "median ms per 0.1 s step" in result.stdout


def test_bench_peer_missing_is_bad_input() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "bench",
            "--sizes",
            "10",
            "--peer",
            "--peer-python",
            "/nonexistent/python",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "not installed" in result.stdout
