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


def crowd(tmp_path: Path, count: int, places: str, rate: float = 0.0) -> Path:
    path = tmp_path / "crowd.yaml"
    head = SCENARIO[: SCENARIO.index("people:")]
    path.write_text(head + f"people:\n  groups:\n    - {{name: crowd, count: {count}, "
                    f"rate_per_hour: {rate}, from: [{places}], to: [aisle1_1]}}\n")  # fmt: skip
    return path


def test_a_crowd_stands_clear_round_its_places_as_far_as_they_hold_it(tmp_path: Path) -> None:
    """People who come at once stand a width apart round their places, as many as those hold
    (put down in a fraction of a second: the places are walked once, not measured against
    everyone already down); more than that is an error that says how many fit."""
    path = crowd(tmp_path, 10_000, "drop_0")
    with pytest.raises(ConfigError, match=r"crowd.yaml line 9: people\.groups\[0\]\.count: "
                                          r"10,000 people do not fit round drop_0 at once: "
                                          r"there is room for (\d|,)+"):  # fmt: skip
        build(load_scenario(str(path), []))
    with pytest.raises(ConfigError) as caught:
        build(load_scenario(str(crowd(tmp_path, 10_000, "drop_0, drop_1")), []))
    room = int(str(caught.value).split("room for ")[1].split(" ")[0].replace(",", ""))
    assert 500 < room < 10_000
    with build(load_scenario(str(crowd(tmp_path, room, "drop_0, drop_1")), [])).sim as sim:
        x = sim.people.positions
        assert len(x) == room
        close, _ = pairs_within(x, 0.4)
        assert not len(close)  # every one of them clear of the others


def test_absurd_crowds_are_refused_before_anything_is_built(tmp_path: Path) -> None:
    """A count or a rate that would put more people on the floor than the body limit is refused
    from the file, as a fleet that size is (the arrivals counted over the run's duration)."""
    with pytest.raises(ConfigError, match=r"line 9: people\.groups\[0\]\.count: 1,000,000,000 "
                                          r"people in all .*--max-bodies"):  # fmt: skip
        build(load_scenario(str(crowd(tmp_path, 1_000_000_000, "drop_0")), []))
    with pytest.raises(ConfigError, match=r"rate_per_hour: 1,666,667 people in all \(1,666,667 "
                                          r"arriving over the run here\)"):  # fmt: skip
        build(load_scenario(str(crowd(tmp_path, 0, "drop_0", rate=1e8)), []))
    with pytest.raises(ConfigError, match=r"1,000,000,000 people would need about 2,000\.0 GB"):
        build(load_scenario(str(crowd(tmp_path, 1_000_000_000, "drop_0")), []), max_bodies=10**10)


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
