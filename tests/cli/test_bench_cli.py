"""`fleetsim bench` end to end on a small fleet (timings are reported, not asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleetsim.bench.suite import DENSE


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
            "--crowd",
            "0",
            "--dense",
            "400",
            "--fleet",
            "100",
            "--fleet-seconds",
            "20",
            "--sensors",
            "100",
            "--no-warehouse",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    variants = {(r["n"], r["variant"]) for r in data["results"]}
    assert variants == {
        (n, v)
        for n in (20, 60)
        for v in ("fleetsim", "fleetsim-1m", "fleetsim-all", "fleetsim-aabb", "fleetsim-eager")
    } | {(4, "fleetsim-arms"), (100, "fleet"), (100, "sensors")} | {(400, v) for v in DENSE}
    rows = {r["variant"]: r for r in data["results"]}
    assert rows["fleetsim-arms"]["joint_actions_done"] > 0
    # Dense: 400 cubes 0.4 m wide 0.6 m apart, all driving through each other.
    assert rows["dense-omni"]["contacts"] > 100 and rows["dense-diff"]["contacts"] > 100
    # ... and held out: 0.7 m apart, sent on as they arrive (with set_goal's defaults).
    assert rows["dense-omni-0.7"]["contacts"] > 100 and rows["dense-diff-0.7"]["contacts"] > 20
    fleet = rows["fleet"]
    assert fleet["seconds"] == 20 and fleet["collisions"] == 0 and fleet["rtf"] > 0
    lidars = rows["sensors"]  # 100 robots, a 360-beam lidar each, 10 Hz, 30 simulated s
    assert lidars["rays_per_s"] > 1e5 and lidars["collisions"] == 0 and lidars["rtf"] > 0
    assert "lidars, 1,000 robots x 360 beams" in result.stdout and "M rays/s" in result.stdout
    assert all(r["ms_per_step"] > 0 for r in data["results"])
    assert all(
        r["bytes_per_robot"] >= 0
        for r in data["results"]
        if r["variant"] not in ("fleet", "sensors")
    )
    assert "fleetsim-aabb" in result.stdout and "median ms per 0.1 s step" in result.stdout
    # The targets: measured where run, "not run" where not; no warehouse-under-2-s target.
    assert "dense, 10,000 differential-drive" in result.stdout and "not run" in result.stdout
    assert "wall time" not in result.stdout


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


def test_bench_times_a_crowd_and_reports_the_targets(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "bench",
            "--sizes",
            "30",
            "--steps",
            "5",
            "--arms",
            "0",
            "--crowd",
            "12",
            "--dense",
            "",
            "--no-warehouse",
            "--no-eager",
            "--no-aabb",
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
    crowd = next(r for r in data["results"] if r["variant"] == "fleetsim-crowd")
    assert crowd["n"] == 12 and crowd["ms_per_step"] > 0 and crowd["touching"] >= 0
    assert "targets" in result.stdout and "not run" in result.stdout  # no 1,000-robot case here
    assert not any(r["variant"].startswith("dense") for r in data["results"])  # --dense ""


def test_targets_read_the_results_they_name() -> None:
    from fleetsim.bench.suite import Suite, targets

    suite = Suite([1000, 10_000, 100_000], ["fleetsim", "peer"])
    suite.results = [
        {
            "variant": "fleetsim",
            "n": 1000,
            "ms_per_step": 1.0,
            "rtf": 100.0,
            "spawn_s": 0.3,
            "bytes_per_robot": 1e4,
        },
        {"variant": "peer", "n": 1000, "ms_per_step": 30.0, "rtf": 3.3},
        {
            "variant": "fleetsim",
            "n": 10_000,
            "ms_per_step": 4.0,
            "rtf": 25.0,
            "spawn_s": 0.8,
            "bytes_per_robot": 1e4,
        },
        {
            "variant": "fleetsim",
            "n": 100_000,
            "ms_per_step": 20.0,
            "rtf": 5.0,
            "spawn_s": 60.0,
            "bytes_per_robot": 1.1e4,
        },
        {"variant": "fleetsim-1m", "n": 100_000, "rtf": 4.5},  # held out, but not the worst
        {"variant": "fleetsim-all", "n": 100_000, "rtf": 6.0},
        {"variant": "fleetsim-crowd", "n": 200, "ms_per_step": 0.8, "rtf": 125.0},
        {"variant": "warehouse", "n": 0, "error": "it failed"},
        {"variant": "dense-omni", "n": 10_000, "rtf": 45.0, "bytes_per_robot": 1e4},
        {"variant": "dense-omni-0.7", "n": 10_000, "rtf": 47.0, "bytes_per_robot": 1e4},
        {"variant": "dense-diff-0.7", "n": 10_000, "rtf": 41.0, "bytes_per_robot": 1e4},
        {"variant": "dense-diff", "n": 10_000, "rtf": 30.0, "bytes_per_robot": 1e4},
        {"variant": "dense-omni", "n": 100_000, "rtf": 6.5, "bytes_per_robot": 2.5e3},
        {"variant": "dense-diff", "n": 100_000, "rtf": 3.0, "bytes_per_robot": 3.5e3},
        {"variant": "fleet", "n": 1000, "rtf": 160.0, "collisions": 0, "stalls": 0},
        {"variant": "fleet", "n": 10_000, "rtf": 16.0, "collisions": 0, "stalls": 2},
        {"variant": "lorr", "n": 10_000, "loop_ms_per_tick": 5.2},
    ]
    rows = {what: (measured, goal, met) for what, measured, goal, met in targets(suite)}
    assert rows["1,000 robots: faster per step than the peer"] == ("30.0x", ">= 25x", True)
    assert rows["10,000 robots: real-time factor"] == ("25.0x", ">= 30x", False)
    assert rows["10,000 robots: spawn time"] == ("0.80 s", "< 1 s", True)
    assert rows["100,000 robots: memory"] == ("1,100 MB", "< 300 MB", False)
    assert rows["100,000 robots: real-time factor"] == ("4.50x", ">= 4x", True)  # the worst
    assert rows["200 mobile_robot URDFs in one aisle: real-time factor"][2] is True
    assert not any("warehouse" in what for what in rows)  # a figure now, no target
    assert rows["dense, 10,000 omnidirectional: real-time factor"] == ("45.0x", ">= 40x", True)
    # the worst of the spacings: 0.6 m's 30x, not 0.7 m's 41x
    assert rows["dense, 10,000 differential-drive: real-time factor"] == ("30.0x", ">= 40x", False)
    assert rows["dense, 100,000 omnidirectional: real-time factor"][2] is True
    assert rows["dense, 100,000 differential-drive: real-time factor"][2] is False
    assert rows["dense, 100,000 robots: memory"] == ("350 MB", "< 300 MB", False)  # the larger
    assert rows["fleet manager, 1,000 robots: real-time factor"] == ("160x", ">= 150x", True)
    assert rows["fleet manager, 5,000 robots: real-time factor"][0] == "not run"
    assert rows["fleet manager, 10,000 robots: real-time factor"][2] is True
    assert rows["fleet manager, 10,000 robots: collisions and stalls"] == ("2", "0", False)
    assert rows["LoRR kit mode, 10,000 robots: the loop's time a tick"] == (
        "5.20 ms",
        "< 10 ms",
        True,
    )


def test_the_warehouse_timing_runs_the_cli_and_reports_failures(tmp_path: Path) -> None:
    from fleetsim.bench.suite import run_warehouse

    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(
        "simulation: {duration: 1.0, timestep: 0.1}\n"
        "robots: [{name: r, model: simple_cube, pose: [0, 0, 0]}]\n"
    )
    timed = run_warehouse(120, str(scenario))
    assert timed["wall_s"] > 0 and "error" not in timed
    failed = run_warehouse(120, str(tmp_path / "missing.yaml"))
    assert "error" in failed and "missing.yaml" in failed["error"]


def test_bench_times_lorr_kit_mode_beside_its_entries(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "bench",
            "--sizes",
            "",
            "--arms",
            "0",
            "--crowd",
            "0",
            "--dense",
            "",
            "--no-warehouse",
            "--lorr",
            "300",
            "--lorr-ticks",
            "40",
            "--json",
            str(out),
            "--plot",
            str(tmp_path / "p.png"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    row = json.loads(out.read_text())["results"][0]
    assert row["variant"] == "lorr" and row["n"] == 300 and row["ticks"] == 40
    assert row["loop_ms_per_tick"] > 0 and row["entry_ms_per_tick"]["planner.plan"] > 0
    assert row["entries"] == "fleetsim defaults" and row["errands_done"] >= 0
    assert "LoRR kit mode, 300 robots, 40 ticks: fleetsim's loop" in " ".join(result.stdout.split())
