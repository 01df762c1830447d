"""Write fleetsim's bundled LoRR problem, `warehouse_small` (src/fleetsim/lorr/examples): a
24 x 40 warehouse grid of shelf blocks with stations down its left side, 60 robots, 500 tasks
of two errands each (fetch at a shelf face, deliver to a station), light seeded delays.
Run from the repository root: python tools/make_lorr_example.py"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROWS, COLS, ROBOTS, TASKS = 24, 40, 60, 500
OUT = Path("src/fleetsim/lorr/examples/warehouse_small")


def main() -> None:
    grid = [["." for _ in range(COLS)] for _ in range(ROWS)]
    for r in range(ROWS):
        for c in range(COLS):
            if r in (0, ROWS - 1) or c in (0, COLS - 1):
                grid[r][c] = "@"
    for top in range(3, ROWS - 3, 4):  # shelf blocks: 2 rows by 8 columns, aisles between
        for left in (6, 17, 28):
            for r in (top, top + 1):
                for c in range(left, left + 8):
                    grid[r][c] = "@"
    stations = [r * COLS + 1 for r in range(2, ROWS - 2, 2)]
    for loc in stations:
        grid[loc // COLS][1] = "E"
    faces = sorted(
        {
            (r + dr) * COLS + c
            for r in range(ROWS)
            for c in range(COLS)
            if grid[r][c] == "@" and 0 < r < ROWS - 1 and 0 < c < COLS - 1
            for dr in (-1, 1)
            if grid[r + dr][c] == "."
        }
    )
    for loc in faces:
        grid[loc // COLS][loc % COLS] = "S"
    rng = np.random.default_rng(0)
    free = [r * COLS + c for r in range(ROWS) for c in range(COLS) if grid[r][c] == "." and c > 2]
    starts = sorted(rng.choice(free, ROBOTS, replace=False).tolist())
    tasks = [(int(rng.choice(faces)), int(rng.choice(stations))) for _ in range(TASKS)]
    OUT.mkdir(parents=True, exist_ok=True)
    lines = "\n".join("".join(row) for row in grid)
    (OUT / "warehouse_small.map").write_text(
        f"type octile\nheight {ROWS}\nwidth {COLS}\nmap\n{lines}\n"
    )
    (OUT / "warehouse_small.agents").write_text(f"{ROBOTS}\n" + "\n".join(map(str, starts)) + "\n")
    body = "\n".join(f"{a},{b}" for a, b in tasks)
    (OUT / "warehouse_small.tasks").write_text(f"{TASKS}\n{body}\n")
    problem = {
        "mapFile": "warehouse_small.map",
        "agentFile": "warehouse_small.agents",
        "teamSize": ROBOTS,
        "taskFile": "warehouse_small.tasks",
        "numTasksReveal": 1.5,
        "agentCounter": 3,
        "agentSize": 1.0,
        "delayConfig": {
            "seed": 7,
            "minDelay": 5,
            "maxDelay": 15,
            "eventModel": "bernoulli",
            "pDelay": 0.002,
            "durationModel": "uniform",
        },
    }
    (OUT / "warehouse_small.json").write_text(json.dumps(problem, indent=4) + "\n")


if __name__ == "__main__":
    main()
