"""Benchmark: a crowd of URDF robots (the bundled `mobile_robot`) in one aisle, a collision check
every step, with the default settings against the exact PyBullet query and boxes only.

200 robots start in four lanes of a 4 m x 60 m aisle, 1.2 m apart, and drive (0.1 s step) to
random points of the aisle, through each other, so that many touch at once; a robot that
arrives gets a new goal (`fleetsim.bench.crowd`). Variants, side by side in one process
(blocks of steps alternate), the same seeded goals:

- "default": mobile robots collide by their footprint (`collision_footprints=True`);
- "exact": PyBullet's distance query on every candidate pair (`collision_footprints=False`);
- "aabb": world boxes only (`collision_narrowphase="aabb"`).

Besides the step time it reports how the footprint's answers compare with the exact ones at
the same steps: contacts the footprint found that PyBullet's exact geometry did not (the box
around the wheels is larger than the wheels), and contacts it missed (must be 0).

    python benchmarks/crowd.py [--robots 200] [--rounds 20] [--block 25]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from common import write_json

from fleetsim.bench.crowd import TIMESTEP, Crowd

VARIANTS = {
    "default": {},
    "exact": {"collision_footprints": False},
    "aabb": {"collision_narrowphase": "aabb"},
}


def run(n: int, rounds: int, block: int, seed: int) -> list[dict[str, Any]]:
    crowds = {v: Crowd(n, seed, **VARIANTS[v]) for v in VARIANTS}
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    extra = missed = exact_pairs = 0
    try:
        for _ in range(rounds):  # blocks alternate, so drift on a shared machine hits each
            for variant, crowd in crowds.items():
                times[variant] += crowd.block(block)
            footprint = crowds["default"].touching()
            exact = crowds["exact"].touching()
            extra += len(footprint - exact)
            missed += len(exact - footprint)
            exact_pairs += len(exact)
    finally:
        for crowd in crowds.values():
            crowd.sim.close()
    results = []
    for variant, ts in times.items():
        ms = statistics.median(ts) * 1e3
        results.append(
            {"robots": n, "variant": variant, "ms_per_step": ms, "rtf": TIMESTEP * 1e3 / ms}
        )
    results.append(
        {
            "robots": n,
            "steps": rounds * block,
            "exact_contacts": exact_pairs,
            "footprint_extra": extra,
            "footprint_missed": missed,
        }
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=25, help="steps per variant per round")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = run(args.robots, args.rounds, args.block, args.seed)
    steps = args.rounds * args.block
    print(f"{args.robots} mobile_robot in one aisle, median of {steps} steps:")
    for r in results[:-1]:
        print(f"  {r['variant']:>8}: {r['ms_per_step']:6.2f} ms a step, {r['rtf']:6.1f}x real time")
    c = results[-1]
    print(
        f"  contacts at the end of each round: exact {c['exact_contacts']}, the footprint found "
        f"{c['footprint_extra']} more and missed {c['footprint_missed']}"
    )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
