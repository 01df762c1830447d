"""Trees from scenario files: `behavior:` on robots and on people groups, run by `fleetsim
run` (the summary's row, the results' KPIs); a bad tree or a missing file is an error naming
the scenario's line and key and the tree file's line; the bundled shift runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.scenario import build, load_scenario

pytest.importorskip("behaviortreepy", reason="behaviour trees need fleetsim[bt]")

SCENARIO = """\
name: trees
simulation: {timestep: 0.1, duration: 120, seed: 4, target_rtf: 0}
site:
  layout: {type: warehouse, aisles: 4, blocks: 1, stations: 2, parking_rows: 1}
robots:
  - name: tug
    model: mobile_robot
    start: [park_0_1]
    behavior: mission.xml
    blackboard: {there: drop_1}
people:
  groups:
    - name: pickers
      count: 4
      from: [drop_0]
      behavior: shift.xml
      blackboard: {rounds: 2}
"""

MISSION = """<root BTCPP_format="4">
  <BehaviorTree ID="Mission">
    <Sequence>
      <GoTo place="{there}"/>
      <Wait seconds="3"/>
      <GoTo place="park_0_1"/>
    </Sequence>
  </BehaviorTree>
</root>
"""

SHIFT = """<root BTCPP_format="4">
  <BehaviorTree ID="Shift">
    <Sequence>
      <Repeat num_cycles="{rounds}">
        <Sequence>
          <ChoosePlace tag="pickup" place="{face}"/>
          <GoTo place="{face}"/>
          <Wait seconds="4"/>
        </Sequence>
      </Repeat>
      <GoTo place="drop_0"/>
      <Leave/>
    </Sequence>
  </BehaviorTree>
</root>
"""


def write(tmp_path: Path, scenario: str = SCENARIO, shift: str = SHIFT) -> Path:
    (tmp_path / "mission.xml").write_text(MISSION)
    (tmp_path / "shift.xml").write_text(shift)
    path = tmp_path / "trees.yaml"
    path.write_text(scenario)
    return path


def test_a_scenarios_trees_run_and_are_summed_up(tmp_path: Path) -> None:
    path = write(tmp_path)
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "fleetsim", "run", str(path), "--output",
                           str(out)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "behaviour trees" in done.stdout and "5 (0 still running, 5 succeeded" in done.stdout
    kpis = json.loads(out.read_text())["kpis"]
    assert kpis["trees"] == 5 and kpis["trees_succeeded"] == 5 and kpis["leaf_failures"] == []
    assert kpis["people_added"] == 4 and kpis["people_arrived"] == 4  # (all left)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda s, x: (s, x.replace('<GoTo place="{face}"/>', '<GoTo plase="{face}"/>')),
         r"trees.yaml line 16: people.groups\[0\].behavior: .*shift.xml, line 7: <GoTo> has "
         r"no port 'plase'"),
        (lambda s, x: (s.replace("mission.xml", "missing.xml"), x),
         r"trees.yaml line 9: robots\[0\].behavior: .*missing.xml: cannot read the tree file"),
        (lambda s, x: (s.replace("    behavior: mission.xml\n",
                                 "    behavior: mission.xml\n    actions: [{type: wait, "
                                 "duration: 1}]\n"), x),
         r"trees.yaml line 6: robots\[0\]: .*give 'actions' or a 'behavior' tree, not both"),
        (lambda s, x: (s.replace("      behavior: shift.xml\n", ""), x),
         r"trees.yaml line 1\d: people.groups\[0\].to: a group walks to places"),
    ],
)  # fmt: skip
def test_a_bad_tree_names_the_scenario_line_and_the_tree_line(tmp_path: Path, change: object,
                                                              where: str) -> None:  # fmt: skip
    scenario, shift = change(SCENARIO, SHIFT)  # type: ignore[operator]
    path = write(tmp_path, scenario, shift)
    with pytest.raises(ConfigError, match=where):
        build(load_scenario(str(path), []))
