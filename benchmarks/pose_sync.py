"""Benchmark: N boxes moved every step by one vectorised callback, eager vs lazy pose sync.

Measures ms per step (median over the timed steps) for each N and sync policy, in one run and
in alternating order, and prints the lazy/eager ratio. Example:
    python benchmarks/pose_sync.py --sizes 1000 10000 --steps 200 --json results/pose_sync.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import median_step_ms, write_json

from fleetsim import (
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)

TIMESTEP = 0.1  # s, as in fleet-scale runs


def run_case(n: int, sync: str, steps: int, warmup: int) -> dict[str, float]:
    params = SimulationParams(
        timestep=TIMESTEP, target_rtf=0, pose_sync=sync, seed=0, collision_check_frequency=0
    )
    with MultiRobotSimulationCore(params) as sim:
        side = int(np.ceil(np.sqrt(n)))
        spawn = SimObjectSpawnParams(visual_shape=ShapeParams("box", half_extents=(0.2, 0.2, 0.1)))
        t0 = time.perf_counter()
        boxes = [
            SimObject.from_params(
                SimObjectSpawnParams(
                    visual_shape=spawn.visual_shape,
                    initial_pose=Pose.from_xyz(1.0 * (i % side), 1.0 * (i // side), 0.1),
                ),
                sim_core=sim,
            )
            for i in range(n)
        ]
        spawn_s = time.perf_counter() - t0
        handles = sim.handles_of(boxes)
        home, _ = sim.get_poses(handles)
        phase = sim.rng.uniform(0, 2 * np.pi, n)

        def wiggle(sim: MultiRobotSimulationCore, dt: float) -> None:
            offset = 0.2 * np.sin(sim.sim_time + phase)
            sim.set_poses(handles, home + np.column_stack((offset, offset, np.zeros(n))))

        sim.register_callback(wiggle)
        ms = median_step_ms(sim, steps, warmup)
        return {
            "n": n,
            "sync": sync,
            "ms_per_step": ms,
            "rtf": TIMESTEP * 1e3 / ms,
            "spawn_s": spawn_s,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    results = []
    for n in args.sizes:
        order = ["lazy", "eager"] if n % 2 else ["eager", "lazy"]
        for sync in order + order[::-1]:  # alternate: e, l, l, e
            results.append(run_case(n, sync, args.steps, args.warmup))

    print(f"{'N':>7} {'sync':>6} {'ms/step':>9} {'RTF @0.1s':>10} {'spawn s':>8}")
    for n in args.sizes:
        per_sync = {}
        for sync in ("eager", "lazy"):
            runs = [r for r in results if r["n"] == n and r["sync"] == sync]
            ms = min(r["ms_per_step"] for r in runs)  # best of the two alternated runs
            per_sync[sync] = ms
            spawn = min(r["spawn_s"] for r in runs)
            print(f"{n:>7} {sync:>6} {ms:>9.3f} {TIMESTEP * 1e3 / ms:>10.0f} {spawn:>8.2f}")
        print(f"{n:>7}  eager/lazy = {per_sync['eager'] / per_sync['lazy']:.1f}x")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
