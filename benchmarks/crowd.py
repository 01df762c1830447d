"""Benchmark: a crowd of URDF robots (the bundled `mobile_robot`) in one aisle, a collision check
every step, with the default settings against the exact PyBullet query and boxes only.

200 robots start in four lanes of a 4 m x 60 m aisle, 1.2 m apart, and drive (differential
drive, 0.1 s step) to random points of the aisle, through each other, so that many touch at
once. Variants, side by side in one process, the same seeded goals:

- "default": mobile robots collide by their footprint (`collision_footprints=True`);
- "exact": PyBullet's distance query on every candidate pair (`collision_footprints=False`);
- "aabb": world boxes only (`collision_narrowphase="aabb"`).

Besides the step time it reports how the footprint's answers compare with the exact ones over
the same steps: contacts the footprint found that PyBullet's exact geometry did not (the box
around the wheels is larger than the wheels), and contacts it missed (must be 0).

    python benchmarks/crowd.py [--robots 200] [--steps 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams

TIMESTEP = 0.1
VARIANTS = {
    "default": {},
    "exact": {"collision_footprints": False},
    "aabb": {"collision_narrowphase": "aabb"},
}


def crowd(n: int, variant: str, seed: int) -> tuple[MultiRobotSimulationCore, list[Agent]]:
    params = SimulationParams(timestep=TIMESTEP, target_rtf=0, seed=seed, **VARIANTS[variant])
    sim = MultiRobotSimulationCore(params)
    lanes = 4
    robots = [
        Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(1.2 * (k // lanes), 0.5 + k % lanes, 0.0), sim_core=sim
        )
        for k in range(n)
    ]
    rng = np.random.default_rng(seed)
    length = 1.2 * (n // lanes)
    for robot in robots:
        x, y = rng.uniform(0, length), rng.uniform(0.3, 3.7)
        robot.set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
    return sim, robots


def run(n: int, steps: int, seed: int) -> list[dict[str, Any]]:
    sims = {v: crowd(n, v, seed)[0] for v in VARIANTS}
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    extra = missed = exact_pairs = 0
    try:
        for _ in range(steps):
            for variant, sim in sims.items():  # the same step of each, one after the other
                t = time.perf_counter()
                sim.step_once()
                times[variant].append(time.perf_counter() - t)
            footprint = set(sims["default"].get_active_collision_pairs())
            exact = set(sims["exact"].get_active_collision_pairs())
            extra += len(footprint - exact)
            missed += len(exact - footprint)
            exact_pairs += len(exact)
    finally:
        for sim in sims.values():
            sim.close()
    results = []
    for variant, ts in times.items():
        ms = statistics.median(ts) * 1e3
        results.append({"robots": n, "variant": variant, "ms_per_step": ms,
                        "rtf": TIMESTEP * 1e3 / ms})  # fmt: skip
    results.append({"robots": n, "steps": steps, "exact_contacts": exact_pairs,
                    "footprint_extra": extra, "footprint_missed": missed})  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=200)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = run(args.robots, args.steps, args.seed)
    print(f"{args.robots} mobile_robot in one aisle, median of {args.steps} steps:")
    for r in results[:-1]:
        print(f"  {r['variant']:>8}: {r['ms_per_step']:6.2f} ms a step, {r['rtf']:6.1f}x real time")
    c = results[-1]
    print(f"  contacts summed over the steps: exact {c['exact_contacts']}, the footprint found "
          f"{c['footprint_extra']} more and missed {c['footprint_missed']}")  # fmt: skip
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
