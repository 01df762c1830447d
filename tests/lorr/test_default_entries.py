"""fleetsim's default entries: they finish tasks, every move they ask for is made (the
executor keeps the plan's order of passing, so no request is ever refused, delays or not), and
no robot holding a task stops for good; the summary reports stalls of entries that do stall."""

from __future__ import annotations

import pytest

from fleetsim.lorr.entries import FILES
from fleetsim.lorr.kit import Entries, KitRun, KitTiming
from fleetsim.lorr.mapf import hosting, load_entry
from fleetsim.lorr.problem import load_problem
from fleetsim.lorr.summary import run_row, stalled

from .kit_helpers import GO_ENTRIES, LORR


def _defaults(**replace: str) -> Entries:
    with hosting():
        files = {**FILES, **replace}
        return Entries(*(load_entry(files[k], k) for k in ("planner", "scheduler", "executor")))


@pytest.mark.parametrize("delay", ["nodelay", "delay"])
def test_defaults_finish_tasks_with_every_move_made(delay: str) -> None:
    problem = load_problem(LORR / "problems" / "maze.domain" / f"maze-example_40-{delay}.json")
    run = KitRun(problem, _defaults(), KitTiming(ticks=800)).run()
    assert run.finished >= 20
    for robot in range(run.team):
        assert run.planned.decoded(robot) == run.actual.decoded(robot), robot  # none refused
    assert stalled(run, window=400) == []  # waits in a crowd, but no deadlock
    assert len(stalled(run)) == run_row(run, 1.0)["robots_stalled"]
    assert run.errors == []
    if delay == "delay":
        assert run.delays is not None and any(run.delays.intervals)


def test_a_stalling_planner_is_reported() -> None:
    problem = load_problem(LORR / "problems" / "maze.domain" / "maze-example_40-nodelay.json")
    naive = str(GO_ENTRIES / "user_planner" / "pyMAPFPlanner.py")
    run = KitRun(problem, _defaults(planner=naive), KitTiming(ticks=400)).run()
    assert run.finished == 0
    assert len(stalled(run)) == run_row(run, 1.0)["robots_stalled"] >= 30
