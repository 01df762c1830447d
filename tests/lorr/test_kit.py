"""Kit mode: the kit's own outputs reproduced for deterministic entries (events, finished
tasks, delays, paths, the last tick's errors), and each rule of the loop on hand-made cases."""

from __future__ import annotations

import gzip
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fleetsim.errors import EntryError
from fleetsim.lorr.kit import Entries, KitRun, KitTiming
from fleetsim.lorr.mapf import Action, ExecutionCommand
from fleetsim.lorr.output import kit_output, write_kit_output
from fleetsim.lorr.problem import load_problem
from fleetsim.lorr.tasks import TaskManager

from .kit_helpers import (
    GO_ENTRIES,
    KIT_ENTRIES,
    LORR,
    AppendExecutor,
    GreedyScheduler,
    StraightPlanner,
    entries_from,
    write_problem,
)

COMPARED = (
    "numTaskFinished",
    "delayIntervals",
    "events",
    "actualPaths",
    "plannerPaths",
    "errors",
    "numPlannerErrors",
    "tasks",
    "start",
    "makespan",
    "teamSize",
)
CORRIDOR = ["." * 12]


@pytest.mark.parametrize(
    ("name", "delay", "variant"),
    [
        ("maze-example_40", "nodelay", ""),
        ("maze-example_40", "delay", ""),
        ("maze-example_40", "nodelay", "-t300s1000"),
        ("maze-example_40", "delay", "-t300s1000"),
        ("room-example_150", "nodelay", ""),
        ("room-example_150", "delay", ""),
        ("random-example_400", "delay", ""),
    ],
)
def test_kit_output_equals_the_kits_own(
    name: str, delay: str, variant: str, tmp_path: Path
) -> None:
    domain = name.split("-")[0] + ".domain"
    problem = load_problem(LORR / "problems" / domain / f"{name}-{delay}.json")
    timing = KitTiming(ticks=1000, plan_ms=300) if variant else KitTiming(ticks=500)
    run = KitRun(problem, entries_from(GO_ENTRIES), timing).run()
    with gzip.open(LORR / "runs" / f"{name}-{delay}-pydet{variant}-r1.output.json.gz") as f:
        kit = json.load(f)
    written = json.loads(write_kit_output(run, tmp_path / "out.json").read_text())
    for key in COMPARED:
        assert written[key] == kit[key], key
    assert list(written) == list(kit)  # the kit's fields, in its order
    if delay == "delay":
        assert any(written["delayIntervals"])
    assert "MAPF" not in sys.modules  # hosted only while running


def test_adoption_every_period_with_one_period_lag(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path, CORRIDOR, [0], [[11]]))
    for plan_ms, period in ((1000, 10), (300, 3), (250, 3)):
        planner, executor = StraightPlanner(), AppendExecutor()
        run = KitRun(
            problem,
            Entries(planner, GreedyScheduler(), executor),
            KitTiming(ticks=40, plan_ms=plan_ms),
        ).run()
        assert executor.adoptions == list(range(0, 40, period))
        assert planner.calls == [0, *range(0, 40, period)]  # initial plan, then launches
        # one FW a plan, each 3 ticks, staged one period after it was asked for
        one = [Action.FW] * 3 + [Action.W] * (period - 3)
        assert run.actual.decoded(0)[: 2 * period] == one + one


def test_errands_events_finished_tasks_and_the_pool(tmp_path: Path) -> None:
    # task 0: errands at cells 3 and 3 again (one errand a tick), then 5; task 1: cell 7
    problem = load_problem(write_problem(tmp_path, CORRIDOR, [0], [[3, 3, 5], [7]]))
    run = KitRun(
        problem,
        Entries(StraightPlanner(burst=12), GreedyScheduler(), AppendExecutor()),
        KitTiming(ticks=60),
    ).run()
    events = run.tasks.events
    assert [e[1:] for e in events] == [(0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 1)]
    first, again = events[0][0], events[1][0]
    assert again == first + 1  # the same cell twice: two ticks
    assert run.finished == 2
    out = kit_output(run)
    # task 0 done -> task 1 revealed at that tick; task 1 done -> task 2 (line 0 again)
    assert [t[:2] for t in out["tasks"]] == [[0, 0], [1, events[2][0]], [2, events[3][0]]]
    assert out["tasks"][2][2] == [0, 3, 0, 3, 0, 5]
    # the robot reached cell 3 after 3 FW of 3 ticks each (ticks 0-8): event at tick 9
    assert first == 9


def test_delays_force_waits_and_are_the_generators(tmp_path: Path) -> None:
    delay = {"pDelay": 0.2, "minDelay": 2, "maxDelay": 4, "seed": 5}
    problem = load_problem(
        write_problem(tmp_path, ["." * 30] * 2, [0, 30], [[29], [59]], delay=delay)
    )
    entries = Entries(StraightPlanner(burst=30), GreedyScheduler(), AppendExecutor())
    run = KitRun(problem, entries, KitTiming(ticks=80)).run()
    assert run.delays is not None
    intervals = run.delays.intervals
    assert sum(len(i) for i in intervals) >= 4
    for robot in range(2):
        planned = run.planned.decoded(robot)
        for start, end in intervals[robot]:
            assert set(planned[start:end]) == {Action.W}, (robot, start, end)
        delayed = {t for start, end in intervals[robot] for t in range(start, end)}
        assert any(planned[t] == Action.FW for t in range(80) if t not in delayed)


def test_schedule_validation_fixes_proposals_in_place() -> None:
    tm = TaskManager([(1,), (2,), (3,), (4,)], team=3, reveal=1.0)
    tm.reveal(0)
    assert sorted(tm.ongoing) == [0, 1, 2]
    proposal = [0, 0, 9]
    tm.set_assignment(proposal)
    assert proposal == [0, -1, -1] and tm.current == [0, -1, -1]
    assert [e[0] for e in tm.schedule_errors] == [
        "task is already assigned by the second agent at the same time",
        "task already finished",
    ]
    tm.update([1, 0, 0], proposal, 1)  # robot 0 opens task 0 (errand at 1) and finishes it
    assert tm.finished == 1 and proposal == [-1, -1, -1] and tm.new_freeagents == [0]
    assert sorted(tm.ongoing) == [1, 2, 3]
    tm.set_assignment([-1, -1, 1])
    tm.ongoing[1].idx_next_loc = 1  # robot 2 has opened task 1 (multi-errand case)
    proposal = [-1, 1, 2]  # give task 1 to robot 1; move robot 2 off its opened task
    tm.set_assignment(proposal)
    assert proposal == [-1, -1, 1]
    assert tm.schedule_errors[-2][:4] == ("task is already opened by other agent", 1, 1, 2)
    assert tm.schedule_errors[-1][0].startswith("schedule agent to another task")
    errors = len(tm.schedule_errors)
    assert not tm.set_assignment([1, -1])  # the wrong size: dropped whole
    assert tm.current == [-1, -1, 1] and len(tm.schedule_errors) == errors + 1


class _Raising(StraightPlanner):
    def plan(self, limit: int) -> list[list[Action]]:
        if len(self.calls) == 2:
            raise KeyError("boom")
        return super().plan(limit)


class _BadAction(StraightPlanner):
    def plan(self, limit: int) -> list[list[Any]]:
        return [[7]]


class _Dropping(AppendExecutor):
    def process_new_plan(self, limit: int, plan: Any, staged: Any) -> list[Any]:
        out = super().process_new_plan(limit, plan, staged)
        if len(self.adoptions) == 2:
            staged[0][0] = Action.CR  # rewrites a staged move
        return out


class _Short(AppendExecutor):
    def next_command(self, limit: int) -> list[ExecutionCommand]:
        return []


def test_entries_that_break_the_interface_are_named_with_the_tick(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path, CORRIDOR, [0], [[11]]))
    names = {"planner": "my_planner.py", "executor": "my_exec.py"}
    cases = [
        (
            Entries(_Raising(), GreedyScheduler(), AppendExecutor(), names),
            r"my_planner.py: plan raised at tick 10: KeyError: 'boom'",
        ),
        (
            Entries(_BadAction(), GreedyScheduler(), AppendExecutor(), names),
            r"my_planner.py: plan at tick 0 gives robot 0 action 7",
        ),
        (
            Entries(StraightPlanner(burst=2), GreedyScheduler(), _Dropping(), names),
            r"my_exec.py: process_new_plan at tick 10: robot 0's staged actions \[R F\] are not",
        ),
        (
            Entries(StraightPlanner(), GreedyScheduler(), _Short(), names),
            r"my_exec.py: next_command at tick 0 returned 0 commands for 1 robots",
        ),
    ]
    for entries, message in cases:
        with pytest.raises(EntryError, match=message):
            KitRun(problem, entries, KitTiming(ticks=30)).run()
        assert "MAPF" not in sys.modules


class _Slow(StraightPlanner):
    def plan(self, limit: int) -> list[list[Action]]:
        time.sleep(0.12)
        return super().plan(limit)


def test_wall_time_late_planner_holds_adoption(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path, CORRIDOR, [0], [[11]]))
    timing = dict(ticks=24, plan_ms=40, tick_ms=20, initial_ms=500)
    prompt = AppendExecutor()
    KitRun(
        problem, Entries(StraightPlanner(), GreedyScheduler(), prompt), KitTiming(**timing)
    ).run()
    assert prompt.adoptions == list(range(0, 24, 2))
    late = AppendExecutor()
    KitRun(
        problem, Entries(_Slow(), GreedyScheduler(), late), KitTiming(**timing, deterministic=False)
    ).run()
    gaps = [b - a for a, b in itertools.pairwise(late.adoptions)]
    assert gaps and min(gaps) >= 5  # a 120 ms plan holds each adoption >= 6 ticks of 20 ms


def test_the_kits_example_entries_run_unmodified(tmp_path: Path) -> None:
    problem = load_problem(LORR / "problems" / "room.domain" / "room-example_150-delay.json")
    run = KitRun(problem, entries_from(KIT_ENTRIES), KitTiming(ticks=60)).run()
    out = kit_output(run, screen=2)
    assert len(out["actualPaths"]) == 150 and "errors" not in out
    moves = sum(run.actual.decoded(r).count(Action.FW) for r in range(150))
    assert moves > 0  # the random GO/STOP executor still lets robots move


def test_wall_time_with_prompt_entries_gives_the_kits_own_output() -> None:
    """The kit's own timing (threads, deadlines, wall clock), as `fleetsim lorr run` runs by
    default: entries far inside their budgets give exactly the kit's run."""
    name = "room-example_150"
    problem = load_problem(LORR / "problems" / "room.domain" / f"{name}-delay.json")
    run = KitRun(problem, entries_from(GO_ENTRIES), KitTiming(ticks=500, deterministic=False))
    out = kit_output(run.run())
    with gzip.open(LORR / "runs" / f"{name}-delay-pydet-r1.output.json.gz") as f:
        kit = json.load(f)
    for key in ("events", "delayIntervals", "actualPaths", "plannerPaths", "errors"):
        assert out[key] == kit[key], key
    assert run.adoptions == 50
