"""A `faults:` section is checked where the scenario is checked: what it asks for that cannot be
meant (rates that could not be simulated, amounts outside their kind's range, robots, vehicles
and topics the run does not have) is an error naming the file, line and key, before anything
runs; and a robot's faults depend on its name, not its place among the robots."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fleetsim import ConfigError
from fleetsim.faults import FaultPlan, FaultSchedule, RobotFaults
from fleetsim.scenario import build, load_scenario

HEAD = """simulation: {timestep: 0.1, target_rtf: 0, duration: 5, seed: 3}
robots:
  - {name: amr_0, model: mobile_robot, pose: [0, 0, 0]}
  - {name: amr_1, model: mobile_robot, pose: [4, 0, 0]}
faults:
"""

BAD = [
    (
        "  robots:\n    - {type: stop, rate_per_hour: 1.0e9}\n",
        "faults.robots[0].rate_per_hour",
        r"1e\+09 faults an hour on each of 2 robots is 555,556 a simulated second \(2,777,778 in "
        r"the 5 s run\)",
    ),
    (
        "  events:\n    - {time: 1, kind: slowdown, target: amr_0, value: 7}\n",
        "faults.events[0].value",
        r"slowdown value 7 is the fraction of its speed it keeps",
    ),
    (
        "  events:\n    - {time: 1, kind: stop, target: amr_9, duration: 3}\n",
        "faults.events[0].target",
        r"no robot 'amr_9' in the run: did you mean 'amr_\d'",
    ),
    (
        "  delays: {p: 0.1, duration_model: gaussian, mean_ratio: 1.5}\n",
        "faults.delays.mean_ratio",
        r"mean_ratio 1.5 is a fraction",
    ),
    (
        "  delays: {p: 0.1, min_steps: 5, max_steps: 2}\n",
        "faults.delays.min_steps",
        r"min_steps 5 is more than max_steps 2",
    ),
    (
        "  network:\n    vda5050: {drop: 0.5, vehicles: [amr_7]}\n",
        "faults.network.vda5050.vehicles[0]",
        r"no robot 'amr_7'",
    ),
    (
        "  network:\n    vda5050: {drop: 0.5, topics: [oder]}\n",
        "faults.network.vda5050.topics[0]",
        r"no topic 'oder' on vda5050: did you mean 'order'\?",
    ),
    (
        "  network:\n    rmf: {drop: 0.5, topics: [navigation]}\n",
        "faults.network.rmf.topics[0]",
        r"no endpoint 'navigation' on rmf: did you mean 'navigate'\?",
    ),
]


@pytest.mark.parametrize(("section", "key", "said"), BAD, ids=[b[1] for b in BAD])
def test_a_fault_that_cannot_be_meant_names_the_file_line_and_key(
    tmp_path: Path, section: str, key: str, said: str
) -> None:
    path = tmp_path / "faulty.yaml"
    path.write_text(HEAD + section)
    with pytest.raises(ConfigError, match=said) as caught:
        build(load_scenario(path))
    message = str(caught.value)
    assert message.startswith(f"{path} line "), message
    assert f": {key}: " in message, message


def test_a_rate_too_high_is_refused_by_validate_at_once(tmp_path: Path) -> None:
    """The run this rate asked for used to hang; now `fleetsim validate` says why, fast."""
    path = tmp_path / "faulty.yaml"
    path.write_text(HEAD + BAD[0][0])
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rate_per_hour" in done.stderr and "a simulated second" in done.stderr
    assert time.monotonic() - began < 60


def test_a_robots_faults_depend_on_its_name_not_its_place() -> None:
    plan = FaultPlan((RobotFaults("stop", rate_per_hour=120.0, duration=(1.0, 5.0)),), seed=7)

    def events(names: list[str]) -> dict[str, list[tuple[float, float]]]:
        schedule = FaultSchedule(plan, names)
        out: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
        for e in schedule.due(3600.0):
            out[e.target].append((e.time, e.duration))
        return out

    three = events(["a", "b", "c"])
    four = events(["new", "a", "b", "c"])  # a robot added at the front
    assert all(three[n] for n in "abc")
    assert {n: four[n] for n in "abc"} == three
    assert events(["c", "b", "a"]) == three  # and in any order


def test_every_fault_kind_is_one_entry_of_the_table() -> None:
    """The kinds a plan accepts are the kinds the injector knows how to begin and end, each
    touching what the plan says it does."""
    from fleetsim.faults.kinds import TABLE
    from fleetsim.faults.plan import DEMAND_KINDS, KINDS, ROBOT_KINDS, SITE_KINDS

    assert set(TABLE) == set(KINDS)
    assert {k for k, v in TABLE.items() if v.touches == "robot"} == {*ROBOT_KINDS, "delay"}
    assert {k for k, v in TABLE.items() if v.touches == "site"} == set(SITE_KINDS)
    assert {k for k, v in TABLE.items() if v.touches == "demand"} == set(DEMAND_KINDS)
    assert {k for k, v in TABLE.items() if not v.lasts} == {"battery", "order_burst"}
