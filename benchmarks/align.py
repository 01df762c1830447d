"""Benchmark: driving with heading alignment (`set_goal`'s default) against driving without it.

N `simple_cube` robots 1 m apart, half of them driving to random points of the fleet's square,
0.1 s steps, with `[fast]` installed: goals set as the README sets them (`set_goal(pose)`, which
turns each robot to the goal's yaw, here 0, on the way), with a random goal yaw (every mover
turns), and with `align_orientation=False` (what `fleetsim bench` used to time). Side by side
in one run, each in a fresh process, the variants alternating `--rounds` times; prints the
median over the rounds of each variant's median step time, its ratio to driving without
alignment (and each round's), the worst variant last, and the most memory a run took. With
`--against DIR` (another checkout of fleetsim, e.g. a `git worktree` of older code), the
defaults also run on that code, alternating with this one `--rounds` times, and the ratio of
their real-time factors is printed (issue 49's target: 100,000 robots at least twice the code
of 2026-12-05). Example:
    python benchmarks/align.py --sizes 10000 100000 [--against ../old] [--json results/align.json]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
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

VARIANTS = ("align off", "defaults", "random goal yaw")


def rss_mb() -> float:
    """This process's resident memory now, MB (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def run(n: int, variant: str, steps: int) -> tuple[float, float]:
    """Median step milliseconds of one variant, and the memory it took (MB)."""
    params = SimulationParams(timestep=0.1, target_rtf=0, seed=0)
    before = rss_mb()
    with MultiRobotSimulationCore(params) as sim:
        side = math.ceil(math.sqrt(n))
        robots = AgentManager(sim).spawn_agents_grid(
            n,
            GridSpawnParams(x_max=side, y_max=side, spacing=1.0),
            AgentSpawnParams(urdf_path="simple_cube"),
        )
        rng = np.random.default_rng(1)
        movers = rng.choice(n, n // 2, replace=False)
        points, yaws = rng.uniform(0, side, (len(movers), 2)), rng.uniform(-3.1, 3.1, len(movers))
        for i, (x, y), yaw in zip(movers.tolist(), points.tolist(), yaws.tolist(), strict=True):
            if variant == "align off":
                robots[i].set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
            elif variant == "defaults":
                robots[i].set_goal(Pose.from_xyz(x, y, 0.0))
            else:
                robots[i].set_goal(Pose.from_yaw(x, y, 0.0, yaw))
        return median_step_ms(sim, steps, warmup=10), rss_mb() - before


def fresh(n: int, variant: str, steps: int) -> tuple[float, float]:
    """`run` in a fresh process (its memory its own)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(run, n, variant, steps).result()


def elsewhere(checkout: Path, n: int, steps: int) -> float:
    """The defaults' median step milliseconds with the fleetsim of another checkout."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve() / "src")}
    command = [sys.executable, __file__, "--one", str(n), "--steps", str(steps)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=900)
    return float(json.loads(out.stdout.splitlines()[-1])["ms"])


def against(checkout: Path, n: int, steps: int, rounds: int) -> dict[str, Any]:
    """This code's defaults beside another checkout's, alternating, `rounds` pairs."""
    here, there = [], []
    for _ in range(rounds):
        there.append(elsewhere(checkout, n, steps))
        here.append(fresh(n, "defaults", steps)[0])
    ratio = statistics.median(there) / statistics.median(here)
    print(
        f"{n:>7} defaults: {statistics.median(here):.2f} ms a step here, "
        f"{statistics.median(there):.2f} in {checkout} ({rounds} alternating pairs): "
        f"{ratio:.2f}x its real-time factor (each pair: "
        + ", ".join(f"{b / a:.2f}" for a, b in zip(here, there, strict=True))
        + ")"
    )
    return {"robots": n, "variant": "against", "ms": here, "their_ms": there, "ratio": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--against", type=Path, help="another checkout to compare the defaults with"
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant (and pairs)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # (a run for --against)
    args = parser.parse_args()
    if args.one:
        print(json.dumps({"ms": run(args.one, "defaults", args.steps)[0]}))
        return
    results: list[dict[str, Any]] = []
    print(
        f"{'robots':>7} {'variant':>16} {'ms/step':>8} {'ratio':>6} {'MB':>6}  (each round's ratio)"
    )
    for n in args.sizes:
        rounds: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
        for _ in range(args.rounds):  # (the variants alternating: the machine's swings shared)
            for variant in VARIANTS:
                rounds[variant].append(fresh(n, variant, args.steps))
        times = {v: statistics.median(ms for ms, _ in runs) for v, runs in rounds.items()}
        for variant in VARIANTS:
            ms, mb = times[variant], max(mb for _, mb in rounds[variant])
            ratio = ms / times["align off"]
            each = [
                a / b for (a, _), (b, _) in zip(rounds[variant], rounds["align off"], strict=True)
            ]
            results.append(
                {"robots": n, "variant": variant, "ms": ms, "ratio": ratio, "mb": mb, "each": each}
            )
            print(
                f"{n:>7} {variant:>16} {ms:>8.2f} {ratio:>6.2f} {mb:>6.0f}  ("
                + ", ".join(f"{r:.2f}" for r in each)
                + ")"
            )
        worst = max(VARIANTS[1:], key=lambda v: times[v])
        print(f"{n:>7} {'worst':>16} {'':>8} {times[worst] / times['align off']:>6.2f} ({worst})")
        if args.against:
            results.append(against(args.against, n, args.steps, args.rounds))
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
