"""What a fuzz row says, pinned down: the closest gap between two robots is the real one (not a
wrong 0, and floors apart on two floors), the check a row reports when several fail is the one
that failed first in time, and shrinking ends on the one fault that suffices."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

from fleetsim import Agent, Pose
from fleetsim.fuzz import Shrinker, parse_checks
from fleetsim.fuzz.checks import Watch, first_failure

from ..conftest import make_sim


def test_the_closest_gap_is_the_closest_the_robots_came() -> None:
    with make_sim(timestep=0.1) as sim:
        still = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim)
        mover = Agent.from_urdf("mobile_robot", Pose.from_xyz(6, 0, 0), sim_core=sim)
        above = Agent.from_urdf("mobile_robot", Pose.from_xyz(20, 0, 5.0), sim_core=sim)
        below = Agent.from_urdf("mobile_robot", Pose.from_xyz(20, 0, 0.0), sim_core=sim)
        watch = Watch(sim, [still, mover])
        floors = Watch(sim, [above, below])
        mover.set_goal(Pose.from_xyz(1.5, 0, 0), align_orientation=False)
        sim.run_simulation(duration=12.0)
        assert mover.get_pose().x == pytest.approx(1.5, abs=0.05)
        assert watch.min_gap_m == pytest.approx(1.5, abs=0.06)  # where it stopped, not 0
        assert floors.min_gap_m == pytest.approx(5.0)  # one x, y, two floors: 5 m apart


def test_a_row_reports_the_check_that_failed_first() -> None:
    checks = parse_checks("collisions,stalls,failed-tasks,task-timeout=100")
    summary = SimpleNamespace(
        tables={
            "stalls": [{"time": 50.0}, {"time": 45.0}],
            "tasks": [
                {"status": "failed", "failed_at": 30.0, "release_time": 0.0, "done_at": None}
            ],
        },
        sim_time=200.0,
    )
    watch = SimpleNamespace(first={"collisions": 40.0})
    check, at = first_failure(checks, summary, watch, [])  # type: ignore[arg-type,misc]
    assert (str(check), at) == ("failed-tasks", 30.0)
    watch.first["collisions"] = 12.5
    check, at = first_failure(checks, summary, watch, [])  # type: ignore[arg-type,misc]
    assert (str(check), at) == ("collisions", 12.5)


class OnlyOneMatters(Shrinker):
    """A run that fails exactly when the stop of amr_3 is among its faults (no simulation)."""

    def fails(self, data: dict[str, Any]) -> dict[str, Any] | None:
        self.runs += 1
        events = data.get("faults", {}).get("events", [])
        hit = any(e["target"] == "amr_3" for e in events)
        return {"check": str(self.check), "first_failure_s": None} if hit else None


def test_shrinking_ends_on_the_one_fault_that_suffices() -> None:
    events = [
        {"time": float(k), "kind": "stop", "target": f"amr_{k}", "duration": 5.0} for k in range(9)
    ]
    data = {
        "simulation": {"duration": 60},
        "robots": [{"name": "amr"}],
        "faults": {"events": events},
    }
    (check,) = parse_checks("collisions")
    shrunk = OnlyOneMatters(copy.deepcopy(data), check, budget=200).shrink()
    assert shrunk.data["faults"]["events"] == [events[3]]
    assert shrunk.row and shrunk.runs < 40
