"""Benchmark: N moving robots with a collision check every step.

Robots (simple cubes, 0.4 m) start on a grid 2 m apart and drive to random goals across the
area, so paths cross and some robots touch. Reports the mean broadphase and narrow-phase
milliseconds and the median whole step, for the AABB-only and closest-points narrow phases.
    python benchmarks/collisions.py --sizes 1000 10000 --steps 100
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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


def run_case(n: int, narrow: Any, steps: int, warmup: int) -> dict[str, Any]:
    params = SimulationParams(timestep=TIMESTEP, target_rtf=0, seed=0, collision_narrowphase=narrow)
    with MultiRobotSimulationCore(params) as sim:
        side = 2.0 * float(np.ceil(np.sqrt(n)))
        agents = AgentManager(sim).spawn_agents_grid(
            n,
            GridSpawnParams(x_max=side, y_max=side, spacing=2.0),
            AgentSpawnParams(urdf_path="simple_cube"),
        )
        goals = sim.rng.uniform(0, side, size=(n, 2))
        for agent, (x, y) in zip(agents, goals, strict=True):
            agent.set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
        ms = median_step_ms(sim, steps, warmup)
        stats = sim.get_profiling_stats()
        return {
            "n": n,
            "narrow_phase": narrow,
            "ms_per_step": ms,
            "rtf": TIMESTEP * 1e3 / ms,
            "broadphase_ms": stats["collision_broadphase"],
            "narrowphase_ms": stats["collision_narrowphase"],
            "active_pairs": len(sim.get_active_collision_pairs()),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--narrow", nargs="+", default=["aabb", "closest_points"])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    results = [run_case(n, nar, args.steps, args.warmup) for n in args.sizes for nar in args.narrow]
    header = ("N", "narrow phase", "broad ms", "narrow ms", "step ms", "RTF", "pairs")
    print("{:>7} {:>15} {:>9} {:>10} {:>8} {:>6} {:>6}".format(*header))
    for r in results:
        print(
            f"{r['n']:>7} {r['narrow_phase']:>15} {r['broadphase_ms']:>9.2f}",
            f"{r['narrowphase_ms']:>10.2f} {r['ms_per_step']:>8.2f} {r['rtf']:>6.0f}",
            f"{r['active_pairs']:>6}",
        )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
