"""`fleetsim bench` end to end on a small fleet (timings are reported, not asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest


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
            "--arms",
            "4",
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
    } | {(4, "fleetsim-arms")}
    arms = next(r for r in data["results"] if r["variant"] == "fleetsim-arms")
    assert arms["joint_actions_done"] > 0
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


def test_the_peer_is_skipped_above_peer_max() -> None:
    from fleetsim.bench.suite import Suite

    # This interpreter has no pybullet-fleet, so its peer case records an error, not a time.
    suite = Suite([10, 20], ["fleetsim", "peer"], steps=2, peer_python=sys.executable, peer_max=10)
    suite.warmup = 1
    results = suite.run(progress=lambda _: None)
    assert sorted((r["n"], r["variant"]) for r in results) == [
        (10, "fleetsim"),
        (10, "peer"),
        (20, "fleetsim"),
    ]
    assert "error" in next(r for r in results if r["variant"] == "peer")
    assert suite.ratios() == {}


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # the optional `bench` extra
    from fleetsim.bench.suite import plot

    rows = [{"variant": v, "n": n, "rtf": r} for v, n, r in [("a", 10, 5.0), ("a", 100, 2.0)]]
    assert plot([*rows, {"variant": "b", "n": 10, "error": "x"}], tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
