"""`fleetsim models` through real subprocesses, as a user runs it."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def fleetsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", *args], capture_output=True, text=True, timeout=120
    )


def test_models_json_lists_types_and_availability() -> None:
    result = fleetsim("models", "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}  # stdout is pure JSON
    assert rows["panda"]["type"] == "arm" and rows["panda"]["available"]
    assert rows["mobile_manipulator"]["type"] == "mobile_manipulator"
    assert rows["husky"]["tier"] == "pybullet_data"
    assert rows["tiago"]["tier"] == "robot_descriptions"


def test_models_table() -> None:
    result = fleetsim("models")
    assert result.returncode == 0, result.stderr
    for word in (
        "name",
        "tier",
        "type",
        "available",
        "rail_arm_robot",
        "mobile_manipulator",
        "kuka_iiwa",
    ):
        assert word in result.stdout


def test_models_show() -> None:
    result = fleetsim("models", "show", "panda", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ee_link_name"] == "panda_grasptarget" and data["ee_link_index"] == 11
    assert data["robot_type"] == "arm" and len(data["movable_joint_names"]) == 9
    table = fleetsim("models", "show", "mobile_robot")
    assert "type: mobile" in table.stdout and "left_wheel_joint" in table.stdout


def test_models_show_unknown_exits_2_with_suggestion() -> None:
    result = fleetsim("models", "show", "pandaa")
    assert result.returncode == 2
    assert "did you mean 'panda'" in result.stderr


def test_models_show_accepts_a_path(tmp_path: Path) -> None:
    result = fleetsim("models", "show", "r2d2.urdf", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["robot_type"] == "mobile"


@pytest.mark.skipif(shutil.which("fleetsim") is None, reason="console script not on PATH")
def test_console_script() -> None:
    result = subprocess.run(["fleetsim", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("fleetsim ")
