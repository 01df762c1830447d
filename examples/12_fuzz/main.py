"""Fuzz a weak fleet manager: find the runs where its robots collide, keep them, shrink them.

`laps.yaml` has six robots lapping a loop under `laps.py`, a deliberately weak fleet manager
that keeps robots apart only by where they start (a planted bug). Without faults nothing goes
wrong. This runs it with random stops and slow-downs for several seeds, checks each run for
robot-robot collisions, and for each failing run keeps a scenario that makes it again and a
shrunk one (fewer robots, faults and seconds) that still collides. With `--lanes` the faults
are lanes blocked for a while instead (a box on the lane, the lane closed to routing): the weak
manager never looks again, so its robots run into the box. Run:
    python examples/12_fuzz/main.py                   # 6 runs of 2 simulated minutes
    python examples/12_fuzz/main.py --lanes           # blocked lanes instead of stops
    python examples/12_fuzz/main.py --runs 20 --out fuzz.parquet   # keep the runs
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from fleetsim.fuzz import fuzz_specs, parse_checks, run_fuzz

HERE = Path(__file__).parent
FAULTS = {
    "robots": [
        {"type": "stop", "rate_per_hour": 20, "duration": [3, 12]},
        {"type": "slowdown", "rate_per_hour": 20, "factor": 0.7, "duration": [5, 20]},
    ]
}
LANES = {"site": [{"type": "lane_blocked", "rate_per_hour": 30, "duration": [10, 30]}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1200, help="steps of 0.1 s a run")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--out", type=Path, help="keep the results here (a .parquet file)")
    parser.add_argument("--lanes", action="store_true", help="blocked lanes instead of stops")
    args = parser.parse_args()
    if args.out is not None:
        fuzz(args.steps, args.runs, args.out, args.lanes)
        return
    with tempfile.TemporaryDirectory(prefix="fleetsim-fuzz-") as folder:  # (removed after)
        fuzz(args.steps, args.runs, Path(folder) / "fuzz.parquet", args.lanes)
        print("(give --out to keep the runs)")


def fuzz(steps: int, runs: int, out: Path, lanes: bool = False) -> None:
    duration = steps * 0.1
    faults, check = (LANES, "collisions") if lanes else (FAULTS, "robot-collisions")
    specs = fuzz_specs(str(HERE / "laps.yaml"), runs, 1, faults, [], duration)
    result = run_fuzz(specs, parse_checks(check), out, workers=2, shrink_runs=40)
    print(f"simulated {duration:.2f} s in {steps} steps per run, {result.ran} runs")
    for folder in sorted(result.failing.values()):
        summary = json.loads((folder / "summary.json").read_text())
        print(
            f"seed {summary['seed']}: collided at {summary['first_failure_s']:.1f} s with "
            f"{summary['robots']} robots and {summary['faults']} faults; shrunk to "
            f"{summary.get('shrunk_robots')} robots, {summary.get('shrunk_faults')} faults, "
            f"{summary.get('shrunk_duration_s') or 0.0:.1f} s: {folder / 'shrunk.yaml'}"
        )
    print(f"{len(result.failing)} of {result.ran} runs failed the check; results: {out}")


if __name__ == "__main__":
    main()
