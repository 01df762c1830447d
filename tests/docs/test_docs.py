"""The documentation works as written.

Every code block of the README and of `docs/` says its language, and each language is checked:
`python` blocks run, a page's blocks in order as one script; every `fleetsim` line of a `bash`
block runs (within a time budget: the few that would take minutes run smaller, as `SMALLER`
says, and servers are started, left to serve a few seconds and stopped with Ctrl-C); `yaml`
blocks are valid scenarios; `sql` runs on a sweep's results; `sh` is the Open-RMF walk-through
(tests/rmf/test_cli.py); `text` is output or a file tree; `xml` blocks are behaviour trees the
tree reader accepts. The site builds in strict mode.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fleetsim.scenario import bundled_scenarios, json_schema

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LANGUAGES = {"python", "bash", "sh", "yaml", "sql", "text", "xml"}
FENCE = re.compile(r"^```(\S*)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def all_blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(page, line, match.group(1), match.group(2)))
    return found


BLOCKS = all_blocks()


def blocks(language: str) -> list[Block]:
    return [b for b in BLOCKS if b.language == language]


def test_every_code_block_says_its_language() -> None:
    unknown = [f"{b.where} {b.language!r}" for b in BLOCKS if b.language not in LANGUAGES]
    assert unknown == [], f"label each block with one of {sorted(LANGUAGES)}"
    assert len(blocks("python")) >= 8 and len(blocks("bash")) >= 6  # the pages were read


def test_every_xml_block_is_a_behaviour_tree_fleetsim_reads() -> None:
    from fleetsim.behavior import LEAVES, read

    assert blocks("xml"), "the behaviour trees guide shows its trees"
    for block in blocks("xml"):
        assert read(block.code, LEAVES).main, block.where


# --- fleetsim commands -----------------------------------------------------------------------


def commands() -> list[tuple[str, str]]:
    """Every `fleetsim ...` line of every bash block (continuations joined, comments dropped)."""
    found = []
    for block in blocks("bash"):
        for line in block.code.replace("\\\n", " ").splitlines():
            if line.startswith("fleetsim "):
                found.append((block.where, " ".join(line.split("  #")[0].split())))
    return found


SERVERS = ("fleetsim vda5050 ", "fleetsim rmf ", "--serve")

# Commands that would take minutes as written run smaller (the same options, fewer runs).
SMALLER: list[tuple[str, str, str]] = [  # (command prefix, pattern, replacement)
    ("fleetsim sweep warehouse", r"--seeds \S+", "--seeds 1"),
    ("fleetsim sweep warehouse", r"simulation\.duration=\d+", "simulation.duration=5"),
    ("fleetsim sweep warehouse", r"=5,10,20,40,80,110", "=5,10"),
    ("fleetsim replay", r"--start 60 --until 120", "--start 5 --until 8"),
    ("fleetsim run warehouse --record", r"$", " --duration 20"),
    ("fleetsim run ", r"--duration 600\b", "--duration 60"),
    ("fleetsim bench", r"--lorr-ticks \d+", "--lorr-ticks 5"),
    ("fleetsim bench", r"--lorr \d+", "--lorr 100"),
    ("fleetsim lorr run warehouse_small --mode continuous", r"-s \d+", "-s 300"),
]


# fleetsim bench's options: (option, value when the page leaves it out, value when it asks)
BENCH_SMALL = [
    ("--sizes", "100", "100"),
    ("--steps", "3", "3"),
    ("--arms", "0", "2"),
    ("--crowd", "0", "10"),
    ("--dense", '""', "100"),
    ("--fleet", '""', "100"),
    ("--sensors", '""', "100"),
]


def smaller(command: str) -> str:
    for prefix, pattern, replacement in SMALLER:
        if command.startswith(prefix):
            command = re.sub(pattern, replacement, command)
    if command.startswith("fleetsim sweep warehouse") and "--duration" not in command:
        command += " --duration 5"
    if command in ("fleetsim run warehouse", "fleetsim run hospital"):  # (10 minutes as written)
        command += " --duration 60"
    if command.startswith("fleetsim bench"):  # as written, but small (tests/cli runs each kind)
        for option, small, given in BENCH_SMALL:
            if f"{option} " not in command:
                command += f" {option} {small}"
            else:  # what the page asks for, small ('' and 0 stay: that part is skipped)
                command = re.sub(rf'{option} (?!""|0\b)\S+', f"{option} {given}", command)
        command += "" if "--no-warehouse" in command else " --no-warehouse"
    return command


def folder_for(tmp_path: Path) -> Path:
    """Where a page's commands run, one after the other (a page's commands may use what its
    earlier ones wrote); the scenarios page's `my_site.yaml` is there."""
    first = next(b for b in blocks("yaml") if b.page.name == "scenarios.md")
    (tmp_path / "my_site.yaml").write_text(first.code)
    return tmp_path


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    pytest.importorskip("amqtt")
    from fleetsim.interfaces.vda5050.broker import EmbeddedBroker

    embedded = EmbeddedBroker().start()
    try:
        yield embedded.url
    finally:
        embedded.stop()


def shell(command: str, prefix: str = "") -> list[str]:
    python = f"{prefix}{sys.executable} -m fleetsim"
    return ["bash", "-c", "exec " + python + command[len("fleetsim") :]]


ENV = {**os.environ, "COLUMNS": "120"}
CHATTER = ("pybullet build time", "semaphore", "numActiveThreads", "Mesa")


@pytest.mark.parametrize("page", sorted({w.split(":")[0] for w, _ in commands()}))
def test_every_documented_command_runs(
    tmp_path: Path, request: pytest.FixtureRequest, page: str
) -> None:
    """Every `fleetsim` command of a page runs, in order, in one folder (a later command may
    read what an earlier one wrote)."""
    folder = folder_for(tmp_path)
    for where, command in commands():
        if where.split(":")[0] == page:
            run_documented(folder, request, where, command)


def run_documented(folder: Path, request: pytest.FixtureRequest, where: str, command: str) -> None:
    """Run one documented command as the page shows it (smaller where it says so)."""
    prefix = ""
    if "--gui" in command or (command.startswith("fleetsim replay") and "--serve" not in command):
        if shutil.which("xvfb-run") is None:
            return  # (a GUI command, where there is no virtual display)
        command = re.sub(r" --duration \S+", "", command).replace("--gui", "--gui --duration 0.5")
        prefix = "xvfb-run -a -s '-screen 0 1024x768x24' "
    command = smaller(command)
    if "mqtt://127.0.0.1:1883" in command:
        command = command.replace("mqtt://127.0.0.1:1883", request.getfixturevalue("broker"))
    if any(s in command for s in SERVERS):
        serve(folder, command)
        return
    result = subprocess.run(
        shell(command, prefix), cwd=folder, capture_output=True, text=True, timeout=300, env=ENV
    )
    said = f"{where}: {command}\n{result.stdout}\n{result.stderr}"
    if "--peer" in command and not Path("/tmp/peer/bin/python").exists():
        # The peer is installed by hand for benchmarks only; without it the command must say so.
        assert result.returncode == 2, said
        assert "pybullet-fleet is not installed for /tmp/peer/bin/python" in result.stdout
        return
    assert result.returncode == 0, said
    assert "Traceback" not in result.stderr, said
    assert not any(text in result.stdout + result.stderr for text in CHATTER), said
    if command.startswith("fleetsim run my_site.yaml --fail-on"):
        assert "actions failed    │ 0" in result.stdout, said


def serve(folder: Path, command: str) -> None:
    """Start a serving command, let it serve, stop it as Ctrl-C does: it must stop cleanly.
    It is stopped once it serves (its port answers, or it said what it serves: its first line
    out), or after 6 s."""
    port = free_port()
    command = re.sub(r"(--port|--serve-port) \d+", rf"\1 {port}", command)
    has_port = f" {port}" in command
    proc = subprocess.Popen(
        shell(command),
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 6.0
        while time.monotonic() < deadline and proc.poll() is None:
            if (has_port and answers(port)) or (not has_port and first and first[0]):
                time.sleep(0.5)  # (serving: a moment more, then stop it)
                break
            time.sleep(0.1)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        reader.join(timeout=5)
        out = "".join(first) + out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, 130), f"{command}\n{out}\n{err}"
    assert "Traceback" not in err, err
    if "--serve" in command:
        assert f"ws://127.0.0.1:{port}" in out + err  # it said where it serves


def answers(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    import socket

    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- Python ----------------------------------------------------------------------------------

# What a page's script prints last, where it prints.
LAST_LINE = {"agents.md": "6 0 {}"}  # every action done, none failed


@pytest.mark.parametrize("page", sorted({b.page for b in blocks("python")}), ids=lambda p: p.name)
def test_each_pages_python_runs_in_order(tmp_path: Path, page: Path) -> None:
    script = tmp_path / "page.py"
    script.write_text("\n".join(b.code for b in blocks("python") if b.page == page))
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    if page.name in LAST_LINE:
        assert result.stdout.splitlines()[-1] == LAST_LINE[page.name]


# --- YAML and the schema ---------------------------------------------------------------------


def scenario_files() -> Iterator[tuple[str, Any]]:
    for name, path in bundled_scenarios().items():
        yield name, yaml.safe_load(path.read_text())
    for block in blocks("yaml"):
        yield block.where, yaml.safe_load(block.code)


def test_the_json_schema_accepts_every_bundled_and_documented_scenario() -> None:
    schema = json.loads(subprocess.check_output([sys.executable, "-m", "fleetsim", "schema"]))
    validator = jsonschema.Draft202012Validator(schema)
    for name, data in scenario_files():
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], name
    bad = {"robots": [{"model": "x", "pose": [1, 2]}]}  # a 2-element pose is still wrong
    assert list(validator.iter_errors(bad))


def test_every_documented_scenario_builds(tmp_path: Path) -> None:
    """The YAML blocks that are whole scenarios (they have robots) build: `fleetsim validate`
    checks models, sites, plugins, actions and faults."""
    whole = [b for b in blocks("yaml") if "robots" in (yaml.safe_load(b.code) or {})]
    assert len(whole) >= 3
    bundled = bundled_scenarios()["twin"].parent
    for companion in bundled.iterdir():  # the files bundled scenarios name, as `examples
        if companion.suffix in (".usda", ".map", ".xml"):  # copy` puts them beside a copy
            shutil.copyfile(companion, tmp_path / companion.name)
    for k, block in enumerate(whole):
        path = tmp_path / f"scenario_{k}.yaml"
        path.write_text(block.code)
        done = subprocess.run(
            [sys.executable, "-m", "fleetsim", "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=300,
            env=ENV,
        )
        assert done.returncode == 0, f"{block.where}\n{done.stdout}\n{done.stderr}"


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


# --- SQL -------------------------------------------------------------------------------------


def test_the_documented_sql_runs_on_a_sweeps_results(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    out = tmp_path / "sweep.parquet"
    sweep = [
        sys.executable,
        "-m",
        "fleetsim",
        "sweep",
        "warehouse",
        "--seeds",
        "1",
        "--set",
        "robots[0].start.random=3,4",
        "--duration",
        "5",
        "--out",
        str(out),
    ]
    subprocess.run(sweep, check=True, capture_output=True, timeout=300, cwd=tmp_path)
    statements = [s.strip() for b in blocks("sql") for s in b.code.split(";") if s.strip()]
    assert statements
    for sql in statements:
        done = subprocess.run(
            [sys.executable, "-m", "fleetsim", "sweep", "query", str(out), sql],
            capture_output=True,
            text=True,
            timeout=120,
            env=ENV,
        )
        assert done.returncode == 0, f"{sql}\n{done.stdout}\n{done.stderr}"
    robots = subprocess.run(
        [sys.executable, "-m", "fleetsim", "sweep", "query", str(out), statements[0]],
        capture_output=True,
        text=True,
        env=ENV,
    ).stdout
    assert "3" in robots and "4" in robots  # one row per swept fleet size


# --- the site --------------------------------------------------------------------------------


def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """Broken links, missing pages and unresolved API references fail the build."""
    pytest.importorskip("mkdocs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "fleetsim sweep" in cli and "--fail-on" in cli  # generated from the command
    schema = (tmp_path / "site" / "reference" / "schema" / "index.html").read_text()
    assert "RobotSpec" in schema and "motion_mode" in schema  # generated from the schema
    api = (tmp_path / "site" / "reference" / "api" / "fleetsim" / "index.html").read_text()
    assert "MultiRobotSimulationCore" in api and "run_simulation" in api
