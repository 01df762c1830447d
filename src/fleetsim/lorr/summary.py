"""What a kit-mode run did, as fleetsim's results: one row of figures for the run and a table
of robots (`fleetsim lorr run --results FILE.json|.csv|.parquet`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleetsim.lorr.continuous import ContinuousRun
from fleetsim.lorr.kit import KitRun
from fleetsim.lorr.mapf import Action
from fleetsim.scenario.results import write_rows

STALL_TICKS = 200  # a robot holding a task that has not moved for this long is stalled


def stalled(run: KitRun, window: int = STALL_TICKS) -> list[int]:
    """Robots holding a task that only waited in the last `window` ticks (none if the run is
    shorter than the window)."""
    if run.t < window:
        return []
    return [
        robot
        for robot in range(run.team)
        if run.tasks.current[robot] != -1
        and set(run.actual.decoded(robot)[-window:]) <= {Action.W, Action.NA}
    ]


def run_row(run: KitRun, wall_s: float) -> dict[str, Any]:
    """The run's figures. `loop_ms_per_tick` is fleetsim's own time a tick (everything but the
    entries); `entry_s` what each entry call took in all."""
    p, t = run.problem, run.timing
    delays = run.delays.intervals if run.delays is not None else []
    ticks = max(1, run.t)
    return {
        "problem": str(p.source),
        "map": p.map_name,
        "robots": run.team,
        "mode": "continuous" if isinstance(run, ContinuousRun) else "kit",
        "deterministic": t.deterministic,
        "ticks": run.t,
        "tasks_finished": run.finished,
        "tasks_per_1000_ticks": round(1000 * run.finished / ticks, 3),
        "errands_done": len(run.tasks.events),
        "robots_stalled": len(stalled(run)),
        "tasks_revealed": len(run.tasks.all_tasks),
        "action_errors_last_tick": len(run.errors),
        "collisions": run.collisions if isinstance(run, ContinuousRun) else 0,
        "faults": _faults(run),
        "schedule_errors": len(run.tasks.schedule_errors),
        "delays": sum(len(d) for d in delays),
        "delayed_robot_ticks": sum(b - a for d in delays for a, b in d),
        "plans_adopted": run.adoptions,
        "plan_period_ticks": t.period,
        "wall_s": round(wall_s, 3),
        "loop_ms_per_tick": round(1000 * run.loop_seconds / ticks, 4),
        **{f"entry_s.{k}": round(v, 4) for k, v in run.entry_seconds.items()},
    }


def _faults(run: KitRun) -> int:
    """fleetsim's faults begun in a continuous run (0 in kit mode)."""
    injector = run.faults if isinstance(run, ContinuousRun) else None
    return len(injector.rows()) if injector is not None else 0


def robot_rows(run: KitRun) -> list[dict[str, Any]]:
    """One row a robot: what it did."""
    done: dict[int, int] = {}
    errands: dict[int, int] = {}
    for task in run.tasks.all_tasks:
        if task.t_completed >= 0 and task.agent_assigned >= 0:
            done[task.agent_assigned] = done.get(task.agent_assigned, 0) + 1
    for _, robot, _, _ in run.tasks.events:
        errands[robot] = errands.get(robot, 0) + 1
    rows = []
    for robot in range(run.team):
        actions = run.actual.decoded(robot)
        rows.append(
            {
                "robot": robot,
                "tasks_finished": done.get(robot, 0),
                "errands_done": errands.get(robot, 0),
                "forward_ticks": actions.count(Action.FW),
                "turn_ticks": actions.count(Action.CR) + actions.count(Action.CCR),
                "wait_ticks": actions.count(Action.W),
            }
        )
    return rows


def write_lorr_results(
    path: str | Path, run: KitRun, wall_s: float, meta: dict[str, Any]
) -> list[Path]:
    """Write the run's row and its robots' table (JSON, CSV or Parquet, by the file name)."""
    return write_rows(
        path, lambda m: {**m, **run_row(run, wall_s)}, {"robots": robot_rows(run)}, meta
    )
