"""Entries written for the kit, unmodified (the kit's own examples in `../shared/lorr`), load
and run against fleetsim's `MAPF` module: planner, scheduler and executor on a real problem."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.lorr import load_problem
from fleetsim.lorr import mapf as kit

LORR = Path(__file__).resolve().parents[3] / "shared" / "lorr"
EXAMPLES = LORR / "kit-python" / "python"


def _env(problem_file: Path) -> kit.SharedEnvironment:
    """The planner's view of a problem at its start: every robot facing east on its start,
    the first tasks revealed, none assigned."""
    problem = load_problem(problem_file)
    revealed = int(problem.reveal * problem.team_size)
    pool = {
        k: kit.Task(k, list(problem.tasks[k % len(problem.tasks)]), t_revealed=0)
        for k in range(revealed)
    }
    states = [kit.State(int(s), 0, 0) for s in problem.starts]
    return kit.SharedEnvironment(
        num_of_agents=problem.team_size,
        rows=problem.rows,
        cols=problem.cols,
        map_name=problem.map_name,
        map=problem.blocked.tolist(),
        goal_locations=[[] for _ in states],
        curr_states=states,
        system_states=states,
        task_pool=pool,
        new_tasks=list(pool),
        new_freeagents=list(range(len(states))),
        curr_task_schedule=[-1] * len(states),
        max_counter=problem.agent_counter,
    )


def test_the_kits_example_entries_run_unmodified() -> None:
    env = _env(LORR / "problems" / "room.domain" / "room-example_150-nodelay.json")
    assert "MAPF" not in sys.modules
    with kit.hosting():
        scheduler = kit.load_entry(EXAMPLES / "user_scheduler" / "pyTaskScheduler.py", "scheduler")
        planner = kit.load_entry(EXAMPLES / "user_planner" / "pyMAPFPlanner.py", "planner")
        executor = kit.load_entry(EXAMPLES / "user_executor" / "pyExecutor.py", "executor")
        for entry in (scheduler, planner, executor):
            entry.env = env
            entry.initialize(30_000)
        schedule = scheduler.plan(1000)
        assert schedule == list(range(150))  # the lowest task ids to the robots in order
        env.goal_locations = [[kit.PairInt(env.task_pool[t].get_next_loc(), 0)] for t in schedule]
        actions = planner.plan(1000)
        assert len(actions) == 150 and all(len(a) == 1 for a in actions)
        assert {a[0] for a in actions} <= set(kit.Action) and kit.Action.FW in {
            a[0] for a in actions
        }
        staged: list[list[kit.Action]] = [[] for _ in range(150)]
        predicted = executor.process_new_plan(100, kit.Plan(actions), staged)
        assert staged == actions and len(predicted) == 150
        moved = [p.location != s.location for p, s in zip(predicted, env.curr_states, strict=True)]
        turned = [
            p.orientation != s.orientation for p, s in zip(predicted, env.curr_states, strict=True)
        ]
        assert any(moved) and any(turned)
        assert set(executor.next_command(100)) <= {
            kit.ExecutionCommand.GO,
            kit.ExecutionCommand.STOP,
        }
    assert "MAPF" not in sys.modules  # (only while hosting)


def test_broken_entries_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "pyMAPFPlanner.py"
    missing.write_text("import MAPF\nclass Planner:\n    pass\n")
    raising = tmp_path / "pyTaskScheduler.py"
    raising.write_text("import MAPF\nraise RuntimeError('no GPU here')\n")
    with kit.hosting():
        with pytest.raises(ConfigError, match="no class pyMAPFPlanner"):
            kit.load_entry(missing, "planner")
        with pytest.raises(ConfigError, match="failed to load: RuntimeError: no GPU here"):
            kit.load_entry(raising, "scheduler")
        with pytest.raises(ConfigError, match="unknown entry kind 'router'"):
            kit.load_entry(missing, "router")
