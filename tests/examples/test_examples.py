"""Every example runs headless for a few steps, as a user would run it, in a subprocess."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).parents[2] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*/main.py"))


def test_examples_exist() -> None:
    assert EXAMPLES, "no examples found"


def run_example(script: Path, steps: int, *more: str) -> str:
    """The example's output after `steps` steps (it must exit 0)."""
    result = subprocess.run(
        [sys.executable, str(script), "--steps", str(steps), *more],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.parent.name)
def test_example_runs_headless(script: Path) -> None:
    out = run_example(script, 50)
    assert re.search(r"simulated \d+\.\d\d s in 50 steps", out), out


def test_the_vda5050_master_control_example_finishes_trips() -> None:
    out = run_example(EXAMPLES_DIR / "08_vda5050_master" / "main.py", 400)
    found = re.search(r"trips finished: (\{.*\})", out)
    assert found, out
    trips = ast.literal_eval(found.group(1))  # serial -> trips, as the example prints it
    assert sorted(trips) == ["amr_0", "amr_1", "amr_2"] and min(trips.values()) >= 1


def test_the_rmf_example_completes_commands() -> None:
    out = run_example(EXAMPLES_DIR / "09_rmf_fleet_manager" / "main.py", 300)
    found = re.search(r"commands completed: (\d+)", out)
    assert found and int(found.group(1)) >= 6, out  # two corners each, at least


def test_the_fleet_manager_example_shows_the_policies_differ() -> None:
    """The example that compares assignment policies must show a difference: picking waves
    leave several orders waiting at once, where nearest and greedy choose differently (already
    in the first five simulated minutes, which the test runs; the example runs thirty)."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES_DIR / "07_fleet_manager" / "main.py"), "--steps", "3000"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    names = ("nearest", "greedy", "LeastDriven")
    words = [line.split() for line in result.stdout.splitlines()]
    rows = {w[0]: w[1:] for w in words if w and w[0] in names}
    assert rows["nearest"] != rows["greedy"], result.stdout
    assert "running nearest ..." in result.stdout  # progress while it works


def test_the_learning_example_learns(tmp_path: Path) -> None:
    """The policy learned in 12,000 grid steps reaches far more goals than random moves; its
    learning curve is drawn."""
    curve = tmp_path / "learning.png"
    out = run_example(EXAMPLES_DIR / "15_learning" / "main.py", 12_000, "--plot", str(curve))
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    found = re.search(r"random moves: ([\d.]+), learned: ([\d.]+)", out)
    assert found, out
    random, learned = float(found.group(1)), float(found.group(2))
    assert learned > 0.3 and learned > 5 * random, out


def test_the_learning_example_evaluates_over_seeds(tmp_path: Path) -> None:
    """The evaluation script runs the learned weights and random moves over seeds in worker
    processes; the learned policy reaches far more goals, the episodes are in Parquet."""
    import pyarrow.parquet as pq

    out_file = tmp_path / "episodes.parquet"
    script = EXAMPLES_DIR / "15_learning" / "evaluate.py"
    result = subprocess.run(
        [sys.executable, str(script), "--seeds", "4", "--out", str(out_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    found = re.search(r"goals per robot: learned ([\d.]+), random ([\d.]+)", result.stdout)
    assert found, result.stdout
    assert float(found.group(1)) > 5 * float(found.group(2)) > 0, result.stdout
    table = pq.read_table(out_file).to_pylist()
    assert [row["seed"] for row in table] == [0, 1, 2, 3]
    assert all(row["status"] == "ok" and row["steps"] == 256 for row in table)


def test_the_openusd_example_drives_the_loop_and_writes_the_run_back(tmp_path: Path) -> None:
    pytest.importorskip("pxr")
    out = run_example(
        EXAMPLES_DIR / "18_openusd" / "main.py", 1500, "--out", str(tmp_path / "r.usdc")
    )
    assert "12 boxes, e.g. /Twin/Racks[0]/Rack; 4 places" in out
    assert "trips done: 12 of 12; collisions: 0" in out, out
    assert "3 robots, 1501 time samples" in out and (tmp_path / "r.usdc").stat().st_size > 0
