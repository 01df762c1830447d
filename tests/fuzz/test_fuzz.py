"""`fleetsim fuzz` finds the planted bug of the example's weak fleet manager (robots kept apart
only by where they start), keeps each failing run as a scenario that `fleetsim run` makes again,
shrinks it to two robots and a fault or two that still collide, writes a row per run with the
check that failed and when; a killed fuzz resumes like a sweep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from fleetsim import ConfigError
from fleetsim.fuzz import ddmin, fuzz_specs, parse_checks, run_fuzz

from .helpers import LAPS, STOPS


def fleetsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_checks_are_parsed_and_bad_ones_named() -> None:
    checks = parse_checks("collisions, task-timeout=600,stalls")
    assert [str(c) for c in checks] == ["collisions", "task-timeout=600", "stalls"]
    with pytest.raises(ConfigError, match="did you mean 'stalls'"):
        parse_checks("stals")
    with pytest.raises(ConfigError, match="task-timeout needs seconds"):
        parse_checks("task-timeout")


def test_ddmin_finds_a_minimal_failing_subset() -> None:
    tried: list[list[int]] = []

    def fails(subset: list[int]) -> bool:
        tried.append(subset)
        return {3, 11} <= set(subset)

    assert ddmin(list(range(16)), fails) == [3, 11]
    assert len(tried) <= 64  # (fewer than the 2^16 subsets by far)


def test_the_planted_bug_is_found_kept_and_shrunk(tmp_path: Path) -> None:
    specs = fuzz_specs(str(LAPS), 2, 1, STOPS, [], 60.0)
    out = tmp_path / "fuzz.parquet"
    result = run_fuzz(specs, parse_checks("robot-collisions"), out, workers=2, shrink_runs=40)
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 2 and {r["seed"] for r in rows} == {1, 2}
    failing = sorted((r for r in rows if r["check"]), key=lambda r: r["seed"])
    assert failing and all(r["check"] == "robot-collisions" for r in failing)
    assert all(0 < r["first_failure_s"] <= 60.0 for r in failing)
    row = failing[0]
    folder = result.failing[row["run_id"]]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["reproduced"] and summary["shrunk_confirmed"]
    assert summary["shrunk_robots"] == 2 and 1 <= summary["shrunk_faults"] <= 2
    assert summary["shrunk_duration_s"] < 60.0
    # the kept scenario is self-contained: `fleetsim run` makes the same collision elsewhere
    kept = yaml.safe_load((folder / "failing.yaml").read_text())
    assert kept["simulation"]["seed"] == row["seed"] and "events" in kept["faults"]
    assert kept["plugins"][0]["class"].endswith("laps.py:SpacedLaps")  # by its file
    again = fleetsim(
        "run", str(folder / "failing.yaml"), "--fail-on", "robot-collisions", cwd=tmp_path
    )
    assert again.returncode == 1 and "robot-robot" in again.stdout, again.stderr
    shrunk = fleetsim(
        "run", str(folder / "shrunk.yaml"), "--fail-on", "robot-collisions", cwd=tmp_path
    )
    assert shrunk.returncode == 1, shrunk.stdout + shrunk.stderr
    assert (folder / "failing.mcap").is_file() and (folder / "shrunk.mcap").is_file()


def test_a_manager_that_ignores_a_blocked_lane_is_found_and_shrunk_to_one_robot(
    tmp_path: Path,
) -> None:
    """The example's manager never looks again: a lane blocked on the loop is run into (the
    reference fleet manager would wait: tests/faults/test_lane_blocked.py)."""
    lanes = {"site": [{"type": "lane_blocked", "rate_per_hour": 60, "duration": [10, 30]}]}
    specs = fuzz_specs(str(LAPS), 2, 1, lanes, [], 60.0)
    result = run_fuzz(
        specs, parse_checks("collisions"), tmp_path / "fuzz.parquet", workers=2, shrink_runs=40
    )
    assert result.failing
    for folder in result.failing.values():
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["reproduced"] and summary["shrunk_confirmed"]
        assert summary["shrunk_robots"] == 1 and summary["shrunk_faults"] == 1
        shrunk = yaml.safe_load((folder / "shrunk.yaml").read_text())
        (event,) = shrunk["faults"]["events"]
        assert event["kind"] == "lane_blocked" and "->" in event["target"]


def test_without_faults_that_matter_nothing_fails_and_a_killed_fuzz_resumes(
    tmp_path: Path,
) -> None:
    calm = {"robots": [{"type": "slowdown", "rate_per_hour": 0.0}]}
    out = tmp_path / "calm.parquet"
    first = run_fuzz(
        fuzz_specs(str(LAPS), 2, 1, calm, [], 20.0), parse_checks("collisions"), out, workers=1
    )
    assert first.ran == 2 and not first.failing
    more = run_fuzz(
        fuzz_specs(str(LAPS), 3, 1, calm, [], 20.0),
        parse_checks("collisions"),
        out,
        workers=1,
        resume=True,
    )
    assert (more.ran, more.skipped, len(more.rows)) == (1, 2, 3)


def test_the_command_line(tmp_path: Path) -> None:
    done = fleetsim(
        "fuzz",
        str(LAPS),
        "--runs",
        "2",
        "--workers",
        "2",
        "--duration",
        "60",
        "--faults",
        json.dumps(STOPS),
        "--check",
        "robot-collisions",
        "--shrink-runs",
        "0",
        "--out",
        "f.parquet",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # a run failed its check
    assert "failed a check" in done.stdout and (tmp_path / "f.parquet").is_file()
    bad = fleetsim("fuzz", str(LAPS), "--check", "colisions", cwd=tmp_path)
    assert bad.returncode == 2 and "did you mean 'collisions'" in bad.stderr + bad.stdout
    none = fleetsim("fuzz", "warehouse", "--runs", "1", cwd=tmp_path)
    assert none.returncode == 2 and "no faults to fuzz with" in none.stderr + none.stdout


def test_an_outside_manager_is_fuzzed_through_vda5050(tmp_path: Path) -> None:
    """`--manager` starts a real master control (another process, over a broker of the run's
    own) for each run: its planted bug (every vehicle to one depot) is a collision, kept; the
    manager's log is in the run's folder, and nothing of it is left running."""
    pytest.importorskip("amqtt")
    depot = LAPS.parent / "depot.yaml"
    master = f"{sys.executable} {LAPS.parent / 'to_the_depot.py'} --broker {{broker}}"
    done = fleetsim(
        "fuzz",
        str(depot),
        "--runs",
        "1",
        "--duration",
        "12",
        "--rtf",
        "6",
        "--manager",
        master,
        "--check",
        "robot-collisions",
        "--shrink-runs",
        "0",
        "--out",
        "o.parquet",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = pq.read_table(tmp_path / "o.parquet").to_pylist()
    assert row["check"] == "robot-collisions" and row["first_failure_s"] < 12.0
    log = tmp_path / "o.runs" / row["run_id"] / "manager.log"
    assert log.is_file()
    summary = json.loads((tmp_path / "o.failures" / row["run_id"] / "summary.json").read_text())
    assert summary["manager"] == master and summary["reproduced"] is not None
    left = subprocess.run(["pgrep", "-f", "to_the_depot.py"], capture_output=True, text=True)
    assert left.stdout.strip() == ""  # every manager stopped
    bad = fleetsim("fuzz", str(depot), "--manager", "x {nope}", cwd=tmp_path)
    assert bad.returncode == 2 and "placeholders" in bad.stdout + bad.stderr


def test_guided_search_mutates_the_closest_runs_and_repeats(tmp_path: Path) -> None:
    rare = {"robots": [{"type": "stop", "rate_per_hour": 20, "duration": [1, 4]}]}

    def guided(out: Path) -> list[dict[str, Any]]:
        specs = fuzz_specs(str(LAPS), 6, 1, rare, [], 20.0)
        result = run_fuzz(
            specs, parse_checks("robot-collisions"), out, workers=1, shrink_runs=0, search="guided"
        )
        return sorted(result.rows, key=lambda r: r["run"])

    rows = guided(tmp_path / "a.parquet")
    assert len(rows) == 6 and [r["run"] for r in rows] == list(range(6))
    seeded, mutated = rows[:3], rows[3:]
    assert all(r.get("parent") is None for r in seeded)
    parents = {r["run_id"] for r in seeded}
    assert all(r["parent"] in parents for r in mutated)  # mutants of the first runs
    assert all(r["min_gap_m"] is not None for r in rows)
    assert len(list((tmp_path / "a.mutants").glob("mutant_*.yaml"))) == 3
    again = guided(tmp_path / "b.parquet")  # the same search, the same runs
    keys = ("check", "first_failure_s", "min_gap_m", "faults")
    assert [[r[k] for k in keys] for r in again] == [[r[k] for k in keys] for r in rows]
