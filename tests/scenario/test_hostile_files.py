"""Malformed and hostile scenario files: `file line key: message`, exit 2, quickly, small."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.loader import ScenarioError

from ..conftest import fleetsim


def laughs() -> str:
    text = "          a: &a [x, x, x, x, x, x, x, x, x]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        text += f"          {name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    head = "robots:\n  - model: simple_cube\n    plugins:\n      - type: patrol\n"
    return head + "        params:\n" + text


CASES = {
    "laughs": (laughs(), "line 13: expands to more than 1,000,000 values"),
    "deep": ("robots: " + "[" * 20000 + "]" * 20000 + "\n", "nested deeper than 64 levels"),
    "deep_block": (
        "robots:\n" + "".join("  " * k + "- \n" for k in range(1, 80)),
        "nested deeper than 64 levels",
    ),
    "empty": ("", "the file is empty"),
    "nothing": ("simulation: {timestep: 0.1}\n", "defines nothing to simulate"),
    "duplicate": (
        "robots:\n  - model: simple_cube\nrobots:\n  - model: mobile_robot\n",
        "line 3: duplicate key 'robots' (first on line 1)",
    ),
    "nan_pose": (
        "robots:\n  - model: simple_cube\n    pose: [.nan, 0, 0]\n",
        "line 3: robots[0].pose[0]: Input should be a finite number",
    ),
    "inf_size": (
        "objects:\n  - shape: {type: cylinder, radius: .inf, height: 1}\n",
        "objects[0].shape.radius: Input should be a finite number",
    ),
    "plugin_import_raises": (
        "robots:\n  - model: simple_cube\n    plugins: [{class: 'boom:P'}]\n",
        "line 3: robots[0].plugins[0]: importing module 'boom' for plugin class 'boom:P' "
        "raised RuntimeError: no",
    ),
    "plugin_init_raises": (
        "robots:\n  - model: simple_cube\n    plugins: [{class: 'fragile:Fragile'}]\n",
        "line 3: robots[0].plugins[0]: Fragile() raised RuntimeError: init bug",
    ),
    "plugin_param_typo": (
        "robots:\n  - model: simple_cube\n    plugins:\n      - type: patrol\n"
        "        params: {waypoint: [[1, 2, 0]]}\n",
        "line 5: robots[0].plugins[0].params.waypoint: unknown key: did you mean 'waypoints'?",
    ),
    "long_value": (
        "robots:\n  - model: simple_cube\n    max_linear_vel: '" + "x" * 5000 + "'\n",
        "...",
    ),
}

PLUGINS = {
    "boom.py": "raise RuntimeError('no')\n",
    "fragile.py": (
        "from fleetsim.scenario import Plugin\n"
        "class Fragile(Plugin):\n"
        "    def __init__(self, **kw):\n"
        "        raise RuntimeError('init bug')\n"
    ),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, text in PLUGINS.items():
        (tmp_path / name).write_text(text)  # next to the scenario: no PYTHONPATH needed
    return tmp_path


@pytest.mark.parametrize("case", sorted(set(CASES) - {"laughs"}))
def test_hostile_files_are_clear_errors(folder: Path, case: str) -> None:
    text, message = CASES[case]
    path = folder / f"{case}.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        loaded = load_scenario(path)
        build(loaded).sim.close()
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)
    assert all(len(line) < 400 for line in str(caught.value).splitlines())


def test_binary_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "photo.yaml"
    path.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(ScenarioError, match="not a text file"):
        load_scenario(path)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # 3 GB of address space


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS")
def test_the_cli_answers_hostile_files_with_exit_2_in_bounded_memory(folder: Path) -> None:
    for case in ("laughs", "deep", "plugin_import_raises"):
        path = folder / f"{case}.yaml"
        path.write_text(CASES[case][0])
        result = subprocess.run(
            [sys.executable, "-m", "fleetsim", "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_limit_memory,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"error: {path}")
        assert "Traceback" not in result.stderr


def test_absurd_counts_are_refused_before_anything_is_built(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("robots:\n  - model: simple_cube\n    grid: {count: 1000000000}\n")
    loaded = load_scenario(path)
    with pytest.raises(ScenarioError, match=r"line 3: robots\[0\]\.grid\.count: 1,000,000,000"):
        build(loaded)
    path.write_text("robots:\n  - model: simple_cube\n    grid: {count: 300}\n")
    with pytest.raises(ScenarioError, match="--max-bodies"):
        build(load_scenario(path), max_bodies=100)
    with build(load_scenario(path), max_bodies=300).sim as sim:
        assert len(sim.sim_objects) == 300


def test_validate_checks_a_large_fleet_on_a_sample(tmp_path: Path) -> None:
    path = tmp_path / "large.yaml"
    path.write_text(
        "objects:\n  - {name: crate, grid: {count: 50000}, pickable: true}\n"
        "robots:\n  - model: mobile_robot\n    grid: {count: 60000}\n"
        "    actions: [{type: pick, object: crate_49999}]\n"
    )
    ok = fleetsim("validate", str(path))
    assert ok.returncode == 0, ok.stderr
    assert "110,000 bodies; checked on up to 10 bodies of each entry" in ok.stdout
    path.write_text(path.read_text().replace("crate_49999", "crate_50000"))
    bad = fleetsim("validate", str(path))
    assert bad.returncode == 2 and "no object named 'crate_50000'" in bad.stderr
