"""Every example runs headless for a few steps, as a user would run it, in a subprocess."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*/main.py"))


def test_examples_exist() -> None:
    assert EXAMPLES, "no examples found"


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.parent.name)
def test_example_runs_headless(script: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(script), "--steps", "50"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"simulated \d+\.\d\d s in 50 steps", result.stdout), result.stdout


def test_the_vda5050_master_control_example_finishes_trips() -> None:
    script = Path(__file__).parents[2] / "examples" / "08_vda5050_master" / "main.py"
    result = subprocess.run(
        [sys.executable, str(script), "--steps", "400"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    found = re.search(r"trips finished: (\{.*\})", result.stdout)
    assert found, result.stdout
    trips = ast.literal_eval(found.group(1))  # serial -> trips, as the example prints it
    assert sorted(trips) == ["amr_0", "amr_1", "amr_2"] and min(trips.values()) >= 1


def test_the_rmf_example_completes_commands() -> None:
    script = Path(__file__).parents[2] / "examples" / "09_rmf_fleet_manager" / "main.py"
    result = subprocess.run(
        [sys.executable, str(script), "--steps", "300"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    found = re.search(r"commands completed: (\d+)", result.stdout)
    assert found and int(found.group(1)) >= 6, result.stdout  # two corners each, at least
