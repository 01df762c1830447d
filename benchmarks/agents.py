"""Benchmark: N agents driving to random goals (lazy pose sync, no collision checks).

Reports spawn time and median ms per step, for omnidirectional and differential fleets, at a
0.1 s step. Goals are far enough that every agent drives for the whole measurement. Example:
    python benchmarks/agents.py --sizes 1000 10000 --steps 200 --json results/agents.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import median_step_ms, write_json

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    SimulationParams,
)

TIMESTEP = 0.1


def run_case(n: int, mode: str, steps: int, warmup: int) -> dict[str, float | int | str]:
    params = SimulationParams(
        timestep=TIMESTEP, target_rtf=0, pose_sync="lazy", seed=0, collision_check_frequency=0
    )
    with MultiRobotSimulationCore(params) as sim:
        side = 2.0 * np.ceil(np.sqrt(n))
        t0 = time.perf_counter()
        agents = AgentManager(sim).spawn_agents_grid(
            n,
            GridSpawnParams(x_max=side, y_max=side, spacing=2.0),
            AgentSpawnParams(urdf_path="simple_cube", motion_mode=mode, max_linear_vel=1.0),  # type: ignore[arg-type]
        )
        spawn_s = time.perf_counter() - t0
        far = sim.rng.uniform(-1, 1, size=(n, 2))
        far = 60.0 * far / np.linalg.norm(far, axis=1, keepdims=True)  # 60 m away: never arrives
        for agent, (dx, dy) in zip(agents, far, strict=True):
            p = agent.get_pose()
            agent.set_goal(Pose.from_xyz(p.x + dx, p.y + dy, 0.0))
        ms = median_step_ms(sim, steps, warmup)
        moving = sum(a.is_moving for a in agents)
        assert moving == n, f"only {moving} of {n} agents were still driving"
        return {
            "n": n,
            "mode": mode,
            "ms_per_step": ms,
            "rtf": TIMESTEP * 1e3 / ms,
            "spawn_s": spawn_s,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--modes", nargs="+", default=["omnidirectional", "differential"])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    results = [
        run_case(n, mode, args.steps, args.warmup) for n in args.sizes for mode in args.modes
    ]
    print(f"{'N':>7} {'mode':>16} {'ms/step':>9} {'RTF @0.1s':>10} {'spawn s':>8}")
    for r in results:
        ms, rtf, spawn = r["ms_per_step"], r["rtf"], r["spawn_s"]
        print(f"{r['n']:>7} {r['mode']:>16} {ms:>9.3f} {rtf:>10.0f} {spawn:>8.2f}")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
