"""Small kit problems written to disk and simple entries, for the kit-mode tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fleetsim.lorr.kit import Entries
from fleetsim.lorr.mapf import Action, ExecutionCommand, State, hosting, load_entry, pair_first

LORR = Path(__file__).resolve().parents[3] / "shared" / "lorr"
GO_ENTRIES = LORR / "variants" / "go-executor" / "python"
KIT_ENTRIES = LORR / "kit-python" / "python"


def entries_from(folder: Path) -> Entries:
    """The kit's three Python entries in `folder` (python/user_*), loaded while hosting."""
    with hosting():
        return Entries(
            load_entry(folder / "user_planner" / "pyMAPFPlanner.py", "planner"),
            load_entry(folder / "user_scheduler" / "pyTaskScheduler.py", "scheduler"),
            load_entry(folder / "user_executor" / "pyExecutor.py", "executor"),
        )


def write_problem(
    folder: Path,
    grid: list[str],
    starts: list[int],
    tasks: list[list[int]],
    reveal: float = 1.0,
    counter: int = 3,
    delay: dict[str, Any] | None = None,
) -> Path:
    """A kit input JSON (and its map, agents and tasks files) in `folder`."""
    (folder / "maps").mkdir(parents=True, exist_ok=True)
    (folder / "maps" / "t.map").write_text(
        f"type octile\nheight {len(grid)}\nwidth {len(grid[0])}\nmap\n" + "\n".join(grid) + "\n"
    )
    (folder / "t.agents").write_text(f"{len(starts)}\n" + "\n".join(map(str, starts)) + "\n")
    lines = "\n".join(",".join(map(str, t)) for t in tasks)
    (folder / "t.tasks").write_text(f"{len(tasks)}\n{lines}\n")
    config = {
        "seed": 0,
        "minDelay": 1,
        "maxDelay": 1,
        "eventModel": "bernoulli",
        "pDelay": 0.0,
        "durationModel": "uniform",
    }
    data = {
        "mapFile": "maps/t.map",
        "agentFile": "t.agents",
        "teamSize": len(starts),
        "taskFile": "t.tasks",
        "numTasksReveal": reveal,
        "agentCounter": counter,
        "agentSize": 1.0,
        "delayConfig": {**config, **(delay or {})},
    }
    path = folder / "t.json"
    path.write_text(json.dumps(data))
    return path


class StraightPlanner:
    """Plans FW (as many as `burst`) for a robot facing its goal's cell along its row, else
    W; records the ticks it was called at."""

    def __init__(self, burst: int = 1) -> None:
        self.env: Any = None
        self.burst = burst
        self.calls: list[int] = []

    def initialize(self, limit: int) -> None:
        pass

    def plan(self, limit: int) -> list[list[Action]]:
        self.calls.append(self.env.system_timestep)
        out = []
        for robot in range(self.env.num_of_agents):
            goals = self.env.goal_locations[robot]
            here = self.env.curr_states[robot].location
            if not goals or pair_first(goals[0]) <= here:
                out.append([Action.W])
            else:
                out.append([Action.FW] * min(self.burst, pair_first(goals[0]) - here))
        return out


class GreedyScheduler:
    """Gives each free robot the lowest open task."""

    def __init__(self) -> None:
        self.env: Any = None
        self.free: set[int] = set()
        self.open: set[int] = set()

    def initialize(self, limit: int) -> None:
        pass

    def plan(self, limit: int) -> list[int]:
        self.free.update(self.env.new_freeagents)
        self.open.update(self.env.new_tasks)
        schedule = list(self.env.curr_task_schedule)
        for robot in sorted(self.free):
            if self.open:
                schedule[robot] = min(self.open)
                self.open.discard(schedule[robot])
                self.free.discard(robot)
        return schedule


class AppendExecutor:
    """Stages every planned action (W aside), always GO; predicts the physical state."""

    def __init__(self) -> None:
        self.env: Any = None
        self.adoptions: list[int] = []

    def initialize(self, limit: int) -> None:
        pass

    def process_new_plan(self, limit: int, plan: Any, staged: Any) -> list[State]:
        self.adoptions.append(self.env.system_timestep)
        for robot, actions in enumerate(plan.actions):
            staged[robot].extend(a for a in actions if a != Action.W)
        out = []
        for robot, s in enumerate(self.env.system_states):
            ahead = sum(1 for a in staged[robot] if a == Action.FW)
            out.append(State(s.location + ahead, -1, s.orientation))
        return out

    def next_command(self, limit: int) -> list[ExecutionCommand]:
        return [ExecutionCommand.GO] * self.env.num_of_agents


class _SeeingPlanner(StraightPlanner):
    """A `StraightPlanner` that notes what it saw of the environment at each call."""

    def __init__(self) -> None:
        super().__init__(burst=8)
        self.seen: list[dict[str, Any]] = []

    def plan(self, limit: int) -> list[list[Action]]:
        env = self.env
        self.seen.append(
            {
                "system": env.system_states[0].location,
                "predicted": env.curr_states[0].location,
                "staged": list(env.staged_actions[0]),
            }
        )
        return super().plan(limit)


def CORRIDOR_ENTRIES() -> Entries:  # noqa: N802 (reads as the entries it makes)
    """A seeing straight planner, the greedy scheduler and the append executor."""
    return Entries(_SeeingPlanner(), GreedyScheduler(), AppendExecutor())
