"""The kit's output JSON for a kit-mode run, field for field, so PlanViz and the competition's
tools read fleetsim's runs.

`screen` is the kit's `-c`: 1 writes everything, 2 leaves out the planner's paths and times,
the errors and the schedules, 3 keeps only the summary fields. Kept as the kit writes them:
`numPlannerErrors` and `errors` hold the last tick's action errors only, `numEntryTimeouts`
is 0 and `plannerTimes` empty, every path chunk repeats the start state. Not kept: the first
tick of each schedule string is the tick of the last errand check (the kit prints an
uninitialised number there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fleetsim.lorr.kit import KitRun
from fleetsim.lorr.tasks import TaskManager

HEADINGS = "ESWN"


def kit_output(run: KitRun, screen: int = 1) -> dict[str, Any]:
    """The kit's output JSON of `run` as a dict (keys in the kit's order)."""
    if screen not in (1, 2, 3):
        raise ValueError(f"screen (-c) must be 1, 2 or 3, not {screen!r}")
    tm, cols, team = run.tasks, run.cols, run.team
    out: dict[str, Any] = {
        "actionModel": "MAPF_T",
        "version": "2026 LoRR",
        "teamSize": team,
        "numTaskFinished": tm.finished,
        "makespan": run.timing.ticks,
        "numPlannerErrors": len(run.errors),
        "numScheduleErrors": len(tm.schedule_errors),
        "numEntryTimeouts": 0,
        "agentMaxCounter": run.problem.agent_counter,
        "outputSegmentSize": 100,
    }
    if screen <= 2:
        delays = run.delays.intervals if run.delays is not None else [[] for _ in range(team)]
        out["delayIntervals"] = [[[a, b] for a, b in robot] for robot in delays]
        out["start"] = [[int(s) // cols, int(s) % cols, "E"] for s in run.problem.starts]
        out["actualPaths"] = run.actual.to_json(cols, run.timing.ticks)
        out["events"] = [list(e) for e in tm.events]
        out["tasks"] = tm.tasks_json(cols)
    if screen <= 1:
        out["plannerPaths"] = run.planned.to_json(cols, run.timing.ticks)
        out["plannerTimes"] = []
        out["errors"] = [list(e) for e in run.errors]
        out["actualSchedule"] = TaskManager.schedule_strings(tm.actual_schedule)
        out["plannerSchedule"] = TaskManager.schedule_strings(tm.planner_schedule)
        out["scheduleErrors"] = [
            [task, a, b, tick, text] for text, task, a, b, tick in tm.schedule_errors
        ]
    return out


def write_kit_output(run: KitRun, path: str | Path, screen: int = 1, pretty: bool = False) -> Path:
    """Write `run`'s output JSON to `path` (as the kit: compact, or indented by 4)."""
    target = Path(path)
    data = kit_output(run, screen)
    text = json.dumps(data, indent=4) if pretty else json.dumps(data, separators=(",", ":"))
    target.write_text(text)
    return target
