"""Benchmark: the grid learning environment (`fleetsim.rl`) beside POGEMA, in one run.

- PettingZoo Parallel API, random actions, 11 x 11 observations (radius 5), lifelong: 64 / 256
  / 1,024 agents on 32^2 / 64^2 / 128^2 random maps with 20% obstacles: agent-steps a second
  on one core (target: >= 2 x 10^5 each), and POGEMA (`pogema_v0`, its own API, `on_target=
  'restart'`) on the same maps, agent counts and radius, in its own virtual environment (it
  pins old pydantic and gymnasium; made on first use under ~/.cache/fleetsim-bench);
- the array API (`GridFleet`), 10,000 agents on a 256^2 map (target: >= 10^6 agent-steps/s);
- the reset of the 1,024-agent world (target: < 50 ms);
- the continuous task (`FleetTask`) in the warehouse grown to 1,000 robots (no fleet manager),
  32-beam lidar observations, random velocity actions: agent-steps a second (>= 10^5).

Each grid case runs with POGEMA's moves and with LoRR's turns, the continuous task with
velocity and with waypoint actions; the worse of each pair is the one held to the target.

    python benchmarks/rl.py [--seconds 5] [--no-pogema] [--json results/rl.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim.bench.fleet import layout_for
from fleetsim.rl import GridConfig, GridFleet, random_map
from fleetsim.rl.continuous import FleetTask, FleetTaskConfig
from fleetsim.rl.envs import GridParallelEnv

CASES = [(64, 32), (256, 64), (1024, 128)]
VENV = Path.home() / ".cache" / "fleetsim-bench" / "pogema"

POGEMA = """
import json, sys, time
import numpy as np
from pogema import GridConfig, pogema_v0
asked = json.load(open(sys.argv[1]))
out = []
for case in asked["cases"]:
    config = GridConfig(map=case["map"], num_agents=case["agents"], obs_radius=5,
                        on_target="restart", max_episode_steps=10**9, seed=0)
    env = pogema_v0(grid_config=config)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 5, case["agents"]).tolist() for _ in range(64)]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < asked["seconds"]:
        env.step(actions[steps % 64])
        steps += 1
    out.append(case["agents"] * steps / (time.perf_counter() - start))
print(json.dumps(out))
"""


def ours(agents: int, size: int, seconds: float, kind: str = "moves") -> float:
    """Agent-steps a second through the PettingZoo API (a dict of actions in, five dicts out)."""
    config = GridConfig(agents=agents, max_steps=10**9, actions=kind)  # type: ignore[arg-type]
    env = GridParallelEnv(random_map(size, 0.2, seed=0), config)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    n = config.n_actions
    actions = [
        dict(zip(env.agents, rng.integers(0, n, agents).tolist(), strict=True)) for _ in range(64)
    ]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(actions[steps % 64])
        steps += 1
    return agents * steps / (time.perf_counter() - start)


def arrays(agents: int, size: int, seconds: float) -> float:
    """Agent-steps a second through the array API."""
    fleet = GridFleet(random_map(size, 0.2, seed=0), GridConfig(agents=agents, max_steps=10**9))
    fleet.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 5, (64, agents))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fleet.step(actions[steps % 64])
        steps += 1
    return agents * steps / (time.perf_counter() - start)


def reset_ms(agents: int, size: int) -> tuple[float, float]:
    """Making the world (its map's connected areas found), and the median of 20 resets (ms)."""
    blocked = random_map(size, 0.2, seed=0)
    start = time.perf_counter()
    fleet = GridFleet(blocked, GridConfig(agents=agents))
    made = time.perf_counter() - start
    times = []
    for seed in range(20):
        start = time.perf_counter()
        fleet.reset(seed=seed)
        times.append(time.perf_counter() - start)
    return 1e3 * made, 1e3 * float(np.median(times))


def continuous(robots: int, seconds: float, kind: str = "velocity") -> float:
    """Agent-steps a second of the continuous task in the grown warehouse."""
    overrides = [f"site.layout.{k}={v}" for k, v in layout_for(robots).items()]
    overrides.append(f"robots[0].start.random={robots}")
    config = FleetTaskConfig(beams=32, actions=kind)  # type: ignore[arg-type]
    with FleetTask.from_scenario("warehouse", overrides, config) as task:
        task.reset(seed=0)
        rng = np.random.default_rng(0)
        high = task.action_high()
        actions = [rng.uniform(-1, 1, (robots, 2)) * high for _ in range(16)]
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            task.step(actions[steps % 16])
            steps += 1
        return robots * steps / (time.perf_counter() - start)


def pogema(seconds: float) -> list[float] | str:
    """POGEMA's agent-steps a second on the same maps, or why it could not run."""
    python = VENV / "bin" / "python"
    if not python.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True)
        pip = [str(python), "-m", "pip", "install", "-q", "pogema"]
        if made.returncode or subprocess.run(pip, capture_output=True).returncode:
            return "could not install pogema into its own environment"
    maps = [random_map(size, 0.2, seed=0) for _, size in CASES]
    asked = {
        "seconds": seconds,
        "cases": [
            {
                "agents": agents,
                "map": "\n".join("".join("#" if b else "." for b in row) for row in m),
            }
            for (agents, _), m in zip(CASES, maps, strict=True)
        ],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(asked, file)
    try:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run([str(python), "-c", POGEMA, file.name], capture_output=True,
                              text=True, env=env, timeout=600)  # fmt: skip
    finally:
        os.unlink(file.name)
    if done.returncode:
        return f"pogema failed: {done.stderr.strip().splitlines()[-1:]}"
    rates: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--no-pogema", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    theirs = "not run (--no-pogema)" if args.no_pogema else pogema(args.seconds)
    for k, (agents, size) in enumerate(CASES):
        moves, turns = ours(agents, size, args.seconds), ours(agents, size, args.seconds, "turns")
        row = {"case": "grid, PettingZoo", "agents": agents, "map": size,
               "agent_steps_per_s": min(moves, turns), "moves_agent_steps_per_s": moves,
               "turns_agent_steps_per_s": turns}  # fmt: skip
        if isinstance(theirs, list):  # (POGEMA has moves only: like beside like)
            row["pogema_agent_steps_per_s"] = theirs[k]
            row["ratio"] = moves / theirs[k]
        rows.append(row)
    rows.append({"case": "grid, arrays", "agents": 10_000, "map": 256,
                 "agent_steps_per_s": arrays(10_000, 256, args.seconds)})  # fmt: skip
    made, reset = reset_ms(1024, 128)
    rows.append({"case": "reset", "agents": 1024, "map": 128, "ms": reset, "made_ms": made})
    waypoints = continuous(1000, args.seconds, "waypoint")
    rows.append({"case": "continuous, warehouse", "agents": 1000,
                 "agent_steps_per_s": min(continuous(1000, args.seconds), waypoints),
                 "waypoint_agent_steps_per_s": waypoints})  # fmt: skip
    for row in rows:
        print(json.dumps(row))
    for row in rows[:3]:
        beside = (
            f"; moves {row['moves_agent_steps_per_s']:,.0f} beside POGEMA's "
            f"{row['pogema_agent_steps_per_s']:,.0f} ({row['ratio']:.1f}x)"
            if "ratio" in row
            else f"; POGEMA: {theirs}"
        )
        print(f"{row['agents']:>5} agents, {row['map']}^2: {row['agent_steps_per_s']:,.0f} "
              f"agent-steps/s, the worse of moves and turns (>= 200,000){beside}")  # fmt: skip
    print(f"arrays, 10,000 agents, 256^2: {rows[3]['agent_steps_per_s']:,.0f} (>= 1,000,000)")
    print(f"reset, 1,024 agents: {rows[4]['ms']:.1f} ms (< 50); making it {made:.0f} ms")
    print(f"continuous, 1,000 robots, 32 beams: {rows[5]['agent_steps_per_s']:,.0f}, the worse "
          "of velocity and waypoint actions (>= 100,000)")  # fmt: skip
    if args.json:
        write_json(args.json, rows)


if __name__ == "__main__":
    main()
