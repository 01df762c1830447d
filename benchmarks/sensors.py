"""Benchmark: lidars at fleet scale, with `[fast]` installed, side by side in one run.

- rays: the bundled warehouse grown to 1,000 robots (`model: mobile_robot_lidar`: a 360-beam
  lidar all round, 20 m, 10 Hz; the racks, walls and robots as obstacles): rays answered per
  wall second of the step's sensing phase (its profile section), against PyBullet's
  `rayTestBatch` along the same beams on the same scene (every body made in PyBullet), and the
  NumPy path (`FLEETSIM_NO_NUMBA=1`, fewer scans: it is slow) for a stated figure.
- fleet 1,000: the same robots sensing at 10 Hz while the fleet manager drives them,
  collisions checked every step: the real-time factor, and the same without lidars.
- fleet 10,000: the warehouse grown for 10,000 robots, each with a 64-beam lidar at 5 Hz: the
  real-time factor and peak memory; and with safety fields (`auto`), their share of the step.

Each case in a fresh process. Targets (issue 50): >= 20 M rays/s, >= 5x and >= 2x real time,
safety fields <= 10% of the step.
    python benchmarks/sensors.py [--seconds 20] [--json results/sensors.json]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim.bench.fleet import layout_for, run_fleet
from fleetsim.geometry import quat
from fleetsim.scenario import build, load_scenario

LIDAR_MODEL = "robots[0].model=mobile_robot_lidar"
SENSORS_64 = "robots[0].sensors=[{beams: 64, rate: 5}]"


def grown(robots: int, *extra: str) -> Any:
    """The warehouse grown for `robots` robots (as `fleetsim bench --fleet` grows it)."""
    overrides = [f"site.layout.{k}={v}" for k, v in layout_for(robots).items()]
    overrides += [f"robots[0].start.random={robots}", *extra]
    return build(load_scenario("warehouse", overrides))


def rays(robots: int, steps: int) -> dict[str, Any]:
    """Rays a second of the sensing phase (median over `steps` steps, every lidar due in each),
    and of PyBullet's `rayTestBatch` along 50 sensors' beams (compiled runs only)."""
    built = grown(robots, LIDAR_MODEL)
    with built.sim as sim:
        sim.step_once()  # (the first scan compiles)
        times = []
        for _ in range(steps):
            profile = sim.step_once(return_profiling=True)
            assert profile is not None
            times.append(profile["sensors"])
        (group,) = sim.lidars.groups
        count = group.ranges.size
        ours = count / (float(np.median(times)) / 1e3)
        row: dict[str, Any] = {"case": "rays", "robots": robots, "rays_per_s": ours}
        if os.environ.get("FLEETSIM_NO_NUMBA"):
            return row | {"case": "rays (no Numba)"}
        row["pybullet_rays_per_s"] = pybullet_rays(sim, group, 50)
        row["ratio"] = ours / row["pybullet_rays_per_s"]
        return row


def pybullet_rays(sim: Any, group: Any, sensors: int) -> float:
    """PyBullet's `rayTestBatch` rays a second along the beams of the first `sensors` lidars."""
    import pybullet as pb

    world = sim.world
    world.realize(np.arange(len(world.bodies)))  # (robots wait for their bodies otherwise)
    sim.sync()
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


def field_share(robots: int, seconds: float) -> dict[str, Any]:
    """The safety fields' share of the step (their profile section over the step's total) for
    `robots` robots with 64-beam lidars at 5 Hz and fields sized from their footprints, under
    the fleet manager for `seconds` simulated seconds."""
    built = grown(robots, SENSORS_64, "robots[0].safety_fields={auto: true}")
    fields, total = 0.0, 0.0
    with built.sim as sim:
        for _ in range(round(seconds / sim.params.timestep)):
            profile = sim.step_once(return_profiling=True)
            assert profile is not None
            fields += profile["safety_fields"]
            total += profile["total"]
        stops = sim.safety.totals(sim.sim_time)["protective_stops"]
    return {"case": "fields", "robots": robots, "share": fields / total, "stops": stops}


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
        fresh(rays, 1000, 10),
        fresh(rays, 1000, 1, numba=False),
        fresh(fleet, 1000, args.seconds),
        fresh(fleet, 1000, args.seconds, LIDAR_MODEL),
        fresh(fleet, 10_000, args.seconds / 2, SENSORS_64),
        fresh(field_share, 10_000, args.seconds / 2),
    ]
    rays_row, plain, bare, sensing, big, fields = results
    print(f"{'case':<34} {'value':>14}  target")
    print(f"{'rays, compiled (M rays/s)':<34} {rays_row['rays_per_s'] / 1e6:>14.1f}  >= 20")
    theirs = rays_row["pybullet_rays_per_s"] / 1e6
    print(f"{'rays, PyBullet rayTestBatch (M/s)':<34} {theirs:>14.3f}")
    print(f"{'ratio to PyBullet':<34} {rays_row['ratio']:>14.0f}x")
    print(f"{'rays, without Numba (M rays/s)':<34} {plain['rays_per_s'] / 1e6:>14.2f}")
    print(f"{'fleet 1,000, no lidars (x real time)':<34} {bare['rtf']:>14.1f}")
    print(f"{'fleet 1,000, 360 beams 10 Hz':<34} {sensing['rtf']:>14.1f}  >= 5")
    print(f"{'fleet 10,000, 64 beams 5 Hz':<34} {big['rtf']:>14.1f}  >= 2")
    print(f"{'  its peak memory (MB)':<34} {big['peak_mb']:>14.0f}")
    print(f"{'  safety fields: share of the step':<34} {fields['share']:>14.1%}  <= 10%")
    met = rays_row["rays_per_s"] >= 20e6 and sensing["rtf"] >= 5 and big["rtf"] >= 2
    met = met and fields["share"] <= 0.1
    print("targets met" if met else "targets NOT met")
    if args.json:
        write_json(args.json, results)
    assert math.isfinite(rays_row["ratio"])


if __name__ == "__main__":
    main()
