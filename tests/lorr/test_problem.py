"""Kit problems read as the kit reads them: the starts and the revealed tasks of the kit's own
runs, and clear errors (file, line, what to change) for broken inputs."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.lorr.problem import load_problem

LORR = Path(__file__).resolve().parents[3] / "shared" / "lorr"


@pytest.mark.parametrize("name", ["maze-example_40", "room-example_150", "random-example_400"])
def test_starts_and_tasks_are_the_kits(name: str) -> None:
    domain = name.split("-")[0] + ".domain"
    problem = load_problem(LORR / "problems" / domain / f"{name}-delay.json")
    with gzip.open(LORR / "runs" / f"{name}-delay-pydet-r1.output.json.gz") as f:
        kit = json.load(f)
    cols = problem.cols
    assert problem.team_size == kit["teamSize"] and problem.agent_counter == 3
    assert [[int(s) // cols, int(s) % cols] for s in problem.starts] == [
        s[:2] for s in kit["start"]
    ]
    for task_id, _, errands in kit["tasks"]:  # (task k is the file's line k % m)
        task = problem.tasks[task_id % len(problem.tasks)]
        assert [v for e in task for v in (e // cols, e % cols)] == errands
    assert int(problem.blocked.sum()) > 300 and not problem.blocked[problem.starts].any()


def _copy(tmp_path: Path) -> Path:
    source = LORR / "problems" / "maze.domain"
    target = tmp_path / "maze"
    shutil.copytree(source, target)
    for file in target.rglob("*"):
        file.chmod(0o644 if file.is_file() else 0o755)
    return target / "maze-example_40-delay.json"


def test_broken_inputs_are_named_with_the_fix(tmp_path: Path) -> None:
    given = _copy(tmp_path)
    data = json.loads(given.read_text())
    broken = dict(data)
    del broken["teamSize"]
    given.write_text(json.dumps(broken))
    with pytest.raises(ConfigError, match="'teamSize' is missing"):
        load_problem(given)
    given.write_text(json.dumps({**data, "teamSize": 10_000}))
    with pytest.raises(ConfigError, match="starts for a teamSize of 10000: lower teamSize"):
        load_problem(given)
    given.write_text(json.dumps({**data, "teamsize": 3}))
    with pytest.raises(ConfigError, match="unknown key 'teamsize'"):
        load_problem(given)
    given.write_text(json.dumps(data))
    agents = given.parent / data["agentFile"]
    lines = agents.read_text().splitlines()
    problem = load_problem(given)
    wall = int(problem.blocked.nonzero()[0][0])
    lines[3] = str(wall)
    agents.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=rf"line 4: location {wall} .* is an obstacle"):
        load_problem(given)
    tasks = given.parent / data["taskFile"]
    tasks.write_text(f"# tasks\n1\n{problem.starts[0]},oops\n")
    agents.write_text("40\n" + "\n".join(str(s) for s in problem.starts) + "\n")
    with pytest.raises(ConfigError, match="line 3: 'oops' is not a location"):
        load_problem(given)
    given.write_text("{not json")
    with pytest.raises(ConfigError, match="line 1: not JSON"):
        load_problem(given)
