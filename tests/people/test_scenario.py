"""The scenario's `people:` section: groups put down clear of one another, arrivals at a rate,
seeded, KPIs in the run's summary and the command's table, errors naming file, line and key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.people.grid import pairs_within
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario

SCENARIO = """\
name: pickers
simulation: {timestep: 0.1, duration: 60, seed: 4, target_rtf: 0}
site:
  layout: {type: warehouse, aisles: 6, blocks: 1, stations: 2, parking_rows: 1}
robots:
  - {name: amr, model: mobile_robot, start: {random: 3, at: parking_spot}}
people:
  groups:
    - name: pickers
      count: 30
      rate_per_hour: 360
      from: [drop_0]
      to: [aisle0_2, aisle2_3, aisle4_1]
      trips: 2
    - name: visitors
      count: 2
      from: [drop_1]
      to: [{to}]
"""


def write(tmp_path: Path, to: str = "aisle1_1") -> Path:
    path = tmp_path / "pickers.yaml"
    path.write_text(SCENARIO.replace("{to}", to))
    return path


def test_groups_arrive_clear_of_each_other_and_are_counted(tmp_path: Path) -> None:
    built = build(load_scenario(str(write(tmp_path)), []))
    with built.sim as sim:
        x = sim.people.positions
        assert len(x) == 32
        close, _ = pairs_within(x, 0.4)
        assert not len(close)  # no one put down overlapping another
        summary = run_scenario(built, duration=60.0)
    k = summary.kpis
    assert k["people_by_group"]["visitors"] == 2
    assert 30 + 1 <= k["people_by_group"]["pickers"] <= 30 + 20  # 6 an hour a minute: ~6 more
    assert k["people_added"] == sum(k["people_by_group"].values())
    assert k["people_arrived"] >= 2 and k["person_contacts"] == 0
    again = build(load_scenario(str(write(tmp_path)), []))
    with again.sim as sim:
        np.testing.assert_array_equal(sim.people.positions, x)  # (seeded)


def test_the_command_prints_the_people_row(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", str(write(tmp_path)), "--duration", "10"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "people" in done.stdout and "robot-person" in done.stdout


def test_an_unknown_place_names_the_file_line_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, to="aisle1_99")
    with pytest.raises(ConfigError, match=r"pickers.yaml line 1\d: people\.groups\[1\]\.to\[0\]: .*"
                                          r"aisle1_99"):  # fmt: skip
        build(load_scenario(str(path), []))


SHIFTS = """\
name: shift change
simulation: {timestep: 0.1, seed: 2, target_rtf: 0}
site:
  layout: {type: warehouse, aisles: 6, blocks: 1, stations: 2, parking_rows: 1}
robots:
  - {name: amr, model: mobile_robot, start: {random: 1, at: parking_spot}}
people:
  groups:
    - {name: morning, count: 6, from: [drop_0], to: [aisle0_2]}
    - name: afternoon
      count: 6
      start: 30
      rate_per_hour: 3600
      stop: {stop}
      from: [drop_1]
      to: [aisle2_3]
"""


def test_a_shift_change_comes_at_its_start_and_arrivals_end_at_stop(tmp_path: Path) -> None:
    path = tmp_path / "shifts.yaml"
    path.write_text(SHIFTS.replace("{stop}", "40"))
    built = build(load_scenario(str(path), []))
    with built.sim as sim:
        run_scenario(built, duration=29.0)
        counts = built.plugins[-1].kpis()["people_by_group"]
        assert counts == {"morning": 6}
        run_scenario(built, duration=11.5)  # to 40.5 s: the shift came, ~10 arrived
        counts = built.plugins[-1].kpis()["people_by_group"]
        assert 6 + 3 <= counts["afternoon"] <= 6 + 25
        run_scenario(built, duration=20.0)  # past stop: no more
        assert built.plugins[-1].kpis()["people_by_group"]["afternoon"] == counts["afternoon"]
        assert sim.people.kpis()["people_arrived"] >= 6  # the morning shift walked off
    path.write_text(SHIFTS.replace("{stop}", "10"))
    with pytest.raises(ConfigError, match=r"shifts.yaml line 1\d: people\.groups\[1\]\.stop: "
                                          r"stop 10 s is before start 30 s"):  # fmt: skip
        build(load_scenario(str(path), []))
