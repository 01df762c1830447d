"""`fleetsim lorr run` given what breaks it: every input a clear error (file and line, exit 2),
no traceback and no hang; an entry that overruns the preprocessing limit stops the run as the
kit does (exit 124, naming it); a first plan that never comes in ends with the run's ticks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from fleetsim.lorr.examples import problem_path

PLANNER = Path(__file__).parents[2] / "src" / "fleetsim" / "lorr" / "entries" / "pyMAPFPlanner.py"


def lorr(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "lorr", "run", *args, "--no-progress"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def problem(tmp_path: Path) -> Path:
    """A copy of the bundled warehouse_small problem to spoil."""
    source = Path(problem_path("warehouse_small"))
    folder = tmp_path / "problem"
    shutil.copytree(source.parent, folder)
    return folder / source.name


def assert_clear(done: subprocess.CompletedProcess[str], code: int, *said: str) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for text in said:
        assert text in done.stderr, done.stderr


def test_inputs_that_are_not_what_the_kit_reads_are_clear_errors(tmp_path: Path) -> None:
    path = problem(tmp_path)
    data = json.loads(path.read_text())
    latin = tmp_path / "latin.json"
    latin.write_bytes(path.read_bytes().replace(b'"teamSize"', b'"teamSize" ', 1) + b"\n\xe9\n")
    assert_clear(lorr(str(latin), cwd=tmp_path), 2, "must be UTF-8 text")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert_clear(lorr(str(deep), cwd=tmp_path), 2, f"{deep}: nested too deeply")
    infinite = path.with_name("infinite.json")
    infinite.write_text(json.dumps({**data, "numTasksReveal": float("inf")}))
    began = time.monotonic()
    assert_clear(lorr(str(infinite), cwd=tmp_path), 2, "'numTasksReveal' must be a finite number")
    assert time.monotonic() - began < 60
    huge = path.with_name("huge.json")
    huge.write_text(json.dumps({**data, "numTasksReveal": 1e12}))
    assert_clear(lorr(str(huge), cwd=tmp_path), 2, "tasks revealed at once")
    tasks = path.with_name(data["taskFile"])
    tasks.write_bytes(tasks.read_bytes() + b"\xff\xfe\n")
    assert_clear(lorr(str(path), cwd=tmp_path), 2, f"{tasks} line", "must be UTF-8")


def test_entries_and_outputs_are_checked_before_the_run(tmp_path: Path) -> None:
    path = problem(tmp_path)
    text_entry = tmp_path / "planner.txt"
    text_entry.write_text(PLANNER.read_text())
    assert_clear(
        lorr(str(path), "--planner", str(text_entry), cwd=tmp_path), 2, "is a Python file (.py)"
    )
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nsys.exit(3)\n")
    assert_clear(
        lorr(str(path), "--planner", str(quits), cwd=tmp_path),
        2,
        f"{quits}: the planner entry called sys.exit(3)",
    )
    began = time.monotonic()
    nowhere = tmp_path / "no" / "such" / "out.json"
    assert_clear(
        lorr(str(path), "-s", "100000", "-o", str(nowhere), cwd=tmp_path),
        2,
        f"--output {nowhere}: no folder",
    )
    assert_clear(
        lorr(str(path), "-s", "100000", "--results", "r.xlsx", cwd=tmp_path),
        2,
        "--results r.xlsx: give a .json or .csv or .parquet file",
    )
    assert time.monotonic() - began < 60  # (refused before 100,000 ticks)


def test_an_initialize_past_the_preprocessing_limit_stops_as_the_kit_does(tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(
        PLANNER.read_text().replace(
            "    def initialize(self, preprocess_time_limit: int) -> None:\n",
            "    def initialize(self, preprocess_time_limit: int) -> None:\n"
            "        import time\n        time.sleep(600)\n",
            1,
        )
    )
    began = time.monotonic()
    done = lorr(str(problem(tmp_path)), "--planner", str(slow), "-p", "500", cwd=tmp_path)
    assert_clear(done, 124, f"{slow}: initialize still running", "limit of 500 ms (-p)")
    assert time.monotonic() - began < 60


def test_a_first_plan_that_never_comes_in_ends_with_the_runs_ticks(tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.py"
    stuck.write_text(
        "import time\n\nclass pyMAPFPlanner:\n"
        "    def initialize(self, limit):\n        pass\n\n"
        "    def plan(self, limit):\n        time.sleep(600)\n"
    )
    began = time.monotonic()
    done = lorr(
        str(problem(tmp_path)),
        "--planner",
        str(stuck),
        "-s",
        "30",
        "-a",
        "20",
        "-n",
        "100",
        cwd=tmp_path,
    )
    assert_clear(done, 1, f"{stuck}: plan did not return the first plan within the run's 30 ticks")
    assert time.monotonic() - began < 60
