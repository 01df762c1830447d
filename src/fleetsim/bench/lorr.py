"""The League of Robot Runners' kit mode at scale: fleetsim's own cost a tick (the loop: the
action model, delays, errands, paths, the environments), side by side with the entries' time.

The map is laid out as the kit's largest warehouse (`warehouse_large`, 170 x 500): open rows
along the top and bottom, stations down both sides, and between them rows of 3 x 2 shelves a
cell apart with an aisle every third row; robots start on distinct free cells (seeded), tasks
are a shelf face then a station, delays are the kit's (Poisson, seeded). Written by fleetsim
(`warehouse_problem`), not taken from the kit. Used by `fleetsim bench --lorr`.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROWS, COLS = 170, 500


def warehouse_grid(rows: int = ROWS, cols: int = COLS) -> list[str]:
    """The map's rows (MovingAI characters: '@' shelf or wall, 'S' shelf face, 'E' station)."""
    grid = [["." for _ in range(cols)] for _ in range(rows)]
    for r in range(7, rows - 7):
        aisle = (r - 7) % 3 == 0
        for c in range(8, cols - 8):
            grid[r][c] = ("S" if c % 4 != 3 else ".") if aisle else ("S" if c % 4 == 3 else "@")
        if r % 3 == 0:
            grid[r][1] = grid[r][cols - 2] = "E"
    return ["".join(row) for row in grid]


def warehouse_problem(folder: Path, robots: int, tasks: int = 0, seed: int = 0) -> Path:
    """Write the kit input JSON (and its files) for `robots` robots into `folder`."""
    grid = warehouse_grid()
    cells = np.array([ch for row in grid for ch in row])
    free = np.flatnonzero(cells != "@")
    faces, stations = np.flatnonzero(cells == "S"), np.flatnonzero(cells == "E")
    if robots > len(free):
        raise ValueError(f"{robots} robots: the map has {len(free)} free cells")
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.choice(free, robots, replace=False))
    count = tasks or 2 * robots
    errands = np.stack([rng.choice(faces, count), rng.choice(stations, count)], axis=1)
    (folder / "warehouse.map").write_text(
        f"type octile\nheight {ROWS}\nwidth {COLS}\nmap\n" + "\n".join(grid) + "\n"
    )
    (folder / "warehouse.agents").write_text(f"{robots}\n" + "\n".join(map(str, starts)) + "\n")
    lines = "\n".join(f"{a},{b}" for a, b in errands.tolist())
    (folder / "warehouse.tasks").write_text(f"{count}\n{lines}\n")
    problem = {
        "mapFile": "warehouse.map",
        "agentFile": "warehouse.agents",
        "teamSize": robots,
        "taskFile": "warehouse.tasks",
        "numTasksReveal": 1.5,
        "agentCounter": 3,
        "agentSize": 1.0,
        "delayConfig": {
            "seed": seed,
            "minDelay": 5,
            "maxDelay": 20,
            "eventModel": "poisson",
            "pDelay": min(0.0005, 10 / robots),
            "durationModel": "uniform",
        },
    }
    path = folder / "warehouse.json"
    path.write_text(json.dumps(problem))
    return path


def run_case(robots: int, ticks: int, entries: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Kit mode, deterministic, for `ticks` ticks with `robots` robots: the loop's and the
    entries' milliseconds a tick. `entries`: a folder with the kit's python/user_* entries
    (else fleetsim's defaults)."""
    from fleetsim.lorr.entries import FILES, find_entries
    from fleetsim.lorr.kit import Entries, KitRun, KitTiming
    from fleetsim.lorr.mapf import hosting, load_entry
    from fleetsim.lorr.problem import load_problem

    with tempfile.TemporaryDirectory() as tmp:
        problem = load_problem(warehouse_problem(Path(tmp), robots, seed=seed))
    files = find_entries({}, cwd=Path(entries)) if entries else dict(FILES)
    with hosting():
        loaded = [load_entry(files[k], k) for k in ("planner", "scheduler", "executor")]
    run = KitRun(problem, Entries(*loaded), KitTiming(ticks=ticks, deterministic=True))
    began = time.perf_counter()
    run.run()
    wall = time.perf_counter() - began
    per_tick = {k: 1000 * v / ticks for k, v in run.entry_seconds.items()}
    return {
        "n": robots,
        "ticks": ticks,
        "map": f"{ROWS} x {COLS} warehouse",
        "entries": entries or "fleetsim defaults",
        "loop_ms_per_tick": 1000 * run.loop_seconds / ticks,
        "entry_ms_per_tick": per_tick,
        "wall_s": wall,
        "tasks_finished": run.finished,
        "errands_done": len(run.tasks.events),
    }
