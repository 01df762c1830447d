"""`fleetsim fuzz` checks what it is given before the first run (faults naming what the run does
not have, a faults file's errors at its own line, a YAML bomb, an `--out` it cannot write, a
manager that is not there), and tells the truth after: runs stopped at `--wall-limit` are
timeouts (exit 1 unless allowed), runs that went wrong say why, a kept failure without a
shrunk case says why, and Ctrl-C before any run finished says nothing was written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .helpers import LAPS, STOPS


def fuzz(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "fuzz", str(LAPS), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_fault_naming_what_the_run_lacks_stops_the_fuzz_before_any_run(tmp_path: Path) -> None:
    began = time.monotonic()
    done = fuzz(
        "--runs",
        "20",
        "--faults",
        "{site: [{type: door_stuck, target: front_door}]}",
        "--out",
        "f.parquet",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "front_door" in done.stderr and not (tmp_path / "f.parquet").exists()
    assert time.monotonic() - began < 60
    robot = fuzz(
        "--runs",
        "20",
        "--faults",
        "{robots: [{type: stop, at: [{robot: amr_42, time: 5}]}]}",
        cwd=tmp_path,
    )
    assert robot.returncode == 2 and "no robot 'amr_42' in the run" in robot.stderr


def test_a_faults_file_error_names_that_file_and_its_line(tmp_path: Path) -> None:
    faults = tmp_path / "faults.yaml"
    faults.write_text(
        "faults:\n  robots:\n    - {type: stop, rate_per_hour: 5}\n"
        "    - {type: stall, rate_per_hour: 5}\n"
    )
    done = fuzz("--faults", str(faults), cwd=tmp_path)
    assert done.returncode == 2
    assert f"{faults} line 4: faults.robots[1].type" in done.stderr, done.stderr
    faults.write_text("robots:\n  - {type: stop, at: [{robot: nobody, time: 1}]}\n")
    done = fuzz("--faults", str(faults), cwd=tmp_path)
    assert done.returncode == 2
    assert f"{faults} line 2: robots[0].at[0].robot: no robot 'nobody'" in done.stderr, done.stderr


def test_a_yaml_bomb_in_faults_is_refused_at_once(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    began = time.monotonic()
    done = fuzz("--faults", str(bomb), cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and str(bomb) in done.stderr, done.stderr
    assert time.monotonic() - began < 30


def test_out_and_manager_are_checked_before_the_runs(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "f.parquet"
    done = fuzz("--faults", json.dumps(STOPS), "--out", str(missing), cwd=tmp_path)
    assert done.returncode == 2 and f"no folder {missing.parent}" in done.stderr
    done = fuzz("--faults", json.dumps(STOPS), "--manager", "no-such-manager --x", cwd=tmp_path)
    assert done.returncode == 2 and "no program 'no-such-manager'" in done.stderr


def test_a_manager_that_exits_at_once_says_why(tmp_path: Path) -> None:
    quits = f"{sys.executable} -c \"print('cannot reach the broker'); raise SystemExit(3)\""
    done = fuzz(
        "--runs",
        "1",
        "--duration",
        "5",
        "--faults",
        json.dumps(STOPS),
        "--manager",
        quits,
        "--shrink-runs",
        "0",
        "--out",
        "f.parquet",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "1 went wrong" in done.stdout
    assert "exited at once (code 3): cannot reach the broker" in done.stderr, done.stderr


def test_runs_stopped_at_the_wall_limit_are_timeouts(tmp_path: Path) -> None:
    args = (
        "--runs",
        "2",
        "--workers",
        "1",
        "--duration",
        "100000",
        "--wall-limit",
        "1",
        "--faults",
        json.dumps({"robots": [{"type": "stop", "rate_per_hour": 0.001}]}),
        "--check",
        "robot-collisions",
        "--out",
        "f.parquet",
    )
    done = fuzz(*args, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 timed out (--wall-limit)" in done.stdout
    allowed = fuzz(*args, "--allow-timeouts", "--resume", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


def test_a_kept_failure_without_a_shrunk_case_says_why(tmp_path: Path) -> None:
    done = fuzz(
        "--runs",
        "1",
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
    assert done.returncode == 1, done.stdout + done.stderr
    (folder,) = (tmp_path / "f.failures").iterdir()
    assert (folder / "failing.yaml").is_file() and not (folder / "shrunk.yaml").exists()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["not_shrunk"] == "shrinking is off (--shrink-runs 0)"
    said = [line for line in done.stdout.splitlines() if line.startswith("not shrunk: ")]
    assert len(said) == 1 and folder.name in said[0], done.stdout
    assert said[0].endswith("shrinking is off (--shrink-runs 0)")


def test_ctrl_c_before_any_run_finished_says_nothing_was_written(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "fuzz",
            str(LAPS),
            "--runs",
            "1",
            "--workers",
            "1",
            "--duration",
            "100000",
            "--faults",
            json.dumps(STOPS),
            "--out",
            "f.parquet",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(6)
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "nothing written" in err and not (tmp_path / "f.parquet").exists(), err
