"""The README works as written: its YAML, its Python and its `fleetsim` commands all run; the
JSON Schema accepts every bundled scenario and describes every property."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fleetsim.scenario import bundled_scenarios, json_schema

README = Path(__file__).parents[2] / "README.md"
TEXT = README.read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXT, re.S)


def readme_commands() -> list[str]:
    """Every `fleetsim ...` line of the README's bash blocks (comments dropped)."""
    lines = [line for block in blocks("bash") for line in block.splitlines()]
    return [line.split("  #")[0].strip() for line in lines if line.startswith("fleetsim ")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    (folder / "my_site.yaml").write_text(blocks("yaml")[0])
    return folder


def run(command: str, cwd: Path, prefix: str = "") -> subprocess.CompletedProcess[str]:
    """A README command line through this interpreter's fleetsim (a shell, for `>`)."""
    python = f"{prefix}{sys.executable} -m fleetsim"
    return subprocess.run(
        ["bash", "-c", python + command[len("fleetsim") :]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )


@pytest.mark.parametrize("command", readme_commands())
def test_every_readme_command_runs(site: Path, command: str) -> None:
    prefix = ""
    if "--gui" in command:
        if shutil.which("xvfb-run") is None:
            pytest.skip("no xvfb-run for a GUI command")
        command = command.replace("--gui", "--gui --duration 2")
        prefix = "xvfb-run -a -s '-screen 0 1024x768x24' "
    if command.startswith("fleetsim bench"):  # as written, but small, no arms, no warehouse run
        command += " --sizes 100 --steps 3 --arms 0 --crowd 10 --no-warehouse"
    result = run(command, site, prefix)
    if "--peer" in command and not Path("/tmp/peer/bin/python").exists():
        # The peer is installed by hand for benchmarks only; without it the command must say so.
        assert result.returncode == 2, result.stdout + result.stderr
        assert "pybullet-fleet is not installed for /tmp/peer/bin/python" in result.stdout
        return
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    chatter = ("pybullet build time", "semaphore", "numActiveThreads", "Mesa")
    assert not any(text in result.stdout + result.stderr for text in chatter)
    if command.startswith("fleetsim run my_site.yaml --fail-on"):
        assert "actions failed    │ 0" in result.stdout


def test_readme_python_runs_in_order(tmp_path: Path) -> None:
    script = tmp_path / "readme.py"
    script.write_text("\n".join(blocks("python")))
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "6 0 {}"  # every action done, none failed


def scenario_files() -> Iterator[tuple[str, Any]]:
    for name, path in bundled_scenarios().items():
        yield name, yaml.safe_load(path.read_text())
    for k, block in enumerate(blocks("yaml")):
        yield f"README yaml {k}", yaml.safe_load(block)


def test_the_json_schema_accepts_every_bundled_and_readme_scenario() -> None:
    schema = json.loads(subprocess.check_output([sys.executable, "-m", "fleetsim", "schema"]))
    validator = jsonschema.Draft202012Validator(schema)
    for name, data in scenario_files():
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], name
    bad = {"robots": [{"model": "x", "pose": [1, 2]}]}  # a 2-element pose is still wrong
    assert list(validator.iter_errors(bad))


def test_every_schema_property_has_a_description() -> None:
    schema = json_schema()
    missing = [
        f"{model}.{name}"
        for model, definition in [("Scenario", schema), *schema["$defs"].items()]
        for name, prop in definition.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert missing == []


def test_schema_descriptions_are_the_field_docstrings() -> None:
    """Descriptions come from the string under each field, inherited ones included, and a
    field's alias ("class") carries its field's docstring."""
    schema = json_schema()
    defs = schema["$defs"]
    assert schema["properties"]["name"]["description"] == "A short name."
    assert defs["DropSpec"]["properties"]["reach"]["description"].startswith(
        "Metres the object may be from the robot's body"
    )  # declared on the base class both actions share
    assert defs["PluginSpec"]["properties"]["class"]["description"].startswith("A plugin class")
