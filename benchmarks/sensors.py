"""Benchmark: lidars at fleet scale, with `[fast]` installed, side by side in one run.

- fleet 1,000 with lidars: the bundled warehouse grown to 1,000 robots (`model:
  mobile_robot_lidar`: a 360-beam lidar all round, 20 m, 10 Hz; the racks, walls and robots as
  obstacles), driven by the fleet manager, collisions checked every step: rays answered per
  wall second of the step's sensing phase (its profile section, the last 100 steps) and the
  real-time factor; the same without lidars; the same with the NumPy path
  (`FLEETSIM_NO_NUMBA=1`, a shorter run) for a stated figure; and PyBullet's `rayTestBatch`
  along 50 of those robots' beams on the same scene (every body made in PyBullet).
- fleet 10,000: the warehouse grown for 10,000 robots, each with a 64-beam lidar at 5 Hz: the
  real-time factor and peak memory; and with safety fields (`auto`), their share of the step.

Each case in a fresh process. Targets (issue 50): >= 20 M rays/s, >= 5x and >= 2x real time,
safety fields <= 10% of the step.
    python benchmarks/sensors.py [--seconds 20] [--json results/sensors.json]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim.bench.fleet import grown, run_fleet
from fleetsim.bench.sensors import LIDAR_MODEL
from fleetsim.geometry import quat

SENSORS_64 = "robots[0].sensors=[{beams: 64, rate: 5}]"
FIELDS = "robots[0].safety_fields={auto: true}"


def pybullet(robots: int) -> dict[str, Any]:
    """PyBullet's `rayTestBatch` rays a second along 50 robots' beams in the grown warehouse."""
    with grown(robots, LIDAR_MODEL).sim as sim:
        sim.step_once()  # (a first scan: the sensors' poses)
        (group,) = sim.lidars.groups
        return {"case": "pybullet", "robots": robots, "rays_per_s": pybullet_rays(sim, group, 50)}


def pybullet_rays(sim: Any, group: Any, sensors: int) -> float:
    """PyBullet's `rayTestBatch` rays a second along the beams of the first `sensors` lidars."""
    import pybullet as pb

    world = sim.world
    world.realize(np.arange(len(world.bodies)))  # (robots wait for their bodies otherwise)
    sim.sync()
    pb.performCollisionDetection(physicsClientId=sim.client)  # (rays read the broadphase)
    rows = world.bodies.rows(group.owners[:sensors])
    q = world.bodies["quat"][rows]
    mount = np.asarray(group.params.mount)
    origins = world.bodies["pos"][rows] + quat.rotate(q, np.broadcast_to(mount[:3], (len(rows), 3)))
    beams = group.params.beam_layout()
    dx, dy = beams.directions(quat.yaw_of(q) + mount[3])
    start = np.repeat(origins, beams.count, axis=0)
    end = start + beams.range_max * np.stack((dx.ravel(), dy.ravel(), np.zeros(dx.size)), 1)
    t0 = time.perf_counter()
    for first in range(0, len(start), 8192):
        pb.rayTestBatch(
            start[first : first + 8192].tolist(),
            end[first : first + 8192].tolist(),
            numThreads=0,
            physicsClientId=sim.client,
        )
    return len(start) / (time.perf_counter() - t0)


def fleet(robots: int, seconds: float, *extra: str) -> dict[str, Any]:
    """`run_fleet` (the grown warehouse under the fleet manager) with its peak memory."""
    row = run_fleet(robots, seconds, *extra)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": f"fleet {robots}", "extra": " ".join(extra), "peak_mb": peak, **row}


def fresh(function: Any, *args: Any, numba: bool = True) -> dict[str, Any]:
    """`function(*args)` in a fresh process (its memory its own; Numba off when not `numba`)."""
    context = multiprocessing.get_context("spawn")
    if not numba:
        os.environ["FLEETSIM_NO_NUMBA"] = "1"
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            result: dict[str, Any] = pool.submit(function, *args).result()
            return result
    finally:
        os.environ.pop("FLEETSIM_NO_NUMBA", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated, per fleet case")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = [
        fresh(fleet, 1000, args.seconds, LIDAR_MODEL),
        fresh(pybullet, 1000),
        fresh(fleet, 1000, args.seconds / 4, LIDAR_MODEL, numba=False),
        fresh(fleet, 1000, args.seconds),
        fresh(fleet, 10_000, args.seconds / 2, SENSORS_64),
        fresh(fleet, 10_000, args.seconds / 2, SENSORS_64, FIELDS),
    ]
    sensing, theirs, plain, bare, big, fields = results
    print(f"{'case':<36} {'value':>12}  target")
    print(f"{'rays, compiled (M rays/s)':<36} {sensing['rays_per_s'] / 1e6:>12.1f}  >= 20")
    print(f"{'rays, PyBullet rayTestBatch (M/s)':<36} {theirs['rays_per_s'] / 1e6:>12.3f}")
    print(f"{'ratio to PyBullet':<36} {sensing['rays_per_s'] / theirs['rays_per_s']:>11.0f}x")
    print(f"{'rays, without Numba (M rays/s)':<36} {plain['rays_per_s'] / 1e6:>12.2f}")
    print(f"{'fleet 1,000, no lidars (x real time)':<36} {bare['rtf']:>12.1f}")
    print(f"{'fleet 1,000, 360 beams 10 Hz':<36} {sensing['rtf']:>12.1f}  >= 5")
    print(f"{'fleet 10,000, 64 beams 5 Hz':<36} {big['rtf']:>12.1f}  >= 2")
    print(f"{'  its peak memory (MB)':<36} {big['peak_mb']:>12.0f}")
    print(f"{'  with safety fields (x real time)':<36} {fields['rtf']:>12.1f}")
    print(f"{'  safety fields: share of the step':<36} {fields['fields_share']:>12.1%}  <= 10%")
    met = sensing["rays_per_s"] >= 20e6 and sensing["rtf"] >= 5 and big["rtf"] >= 2
    print("targets met" if met and fields["fields_share"] <= 0.1 else "targets NOT met")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
