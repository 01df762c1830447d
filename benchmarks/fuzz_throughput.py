"""How many fuzz runs an hour: `fleetsim fuzz` on the bundled 100-robot warehouse, 10
simulated minutes a run, with robot faults (stops and slow-downs), checked for collisions,
stalls and failed tasks, on a local pool. The goal: 1,000 runs in at most 15 minutes of wall
time on a 2-core machine.

    python benchmarks/fuzz_throughput.py --runs 1000 --workers 2

Reports the wall time (pool start-up, every run, keeping and shrinking the failing runs), the
runs a minute and, for fewer runs than 1,000, the time 1,000 would take at that rate.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import tempfile
import time
from collections import Counter
from pathlib import Path

from fleetsim.fuzz import fuzz_specs, parse_checks, run_fuzz

FAULTS = {
    "robots": [
        {"type": "stop", "rate_per_hour": 6, "duration": [10, 30]},
        {"type": "slowdown", "rate_per_hour": 4, "factor": 0.5, "duration": 20},
    ]
}
GOAL_S = 15 * 60  # 1,000 runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=600.0)
    parser.add_argument("--scenario", default="warehouse")
    parser.add_argument("--check", default="collisions,stalls,failed-tasks")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleetsim-fuzz-bench-") as folder:
        specs = fuzz_specs(args.scenario, args.runs, 1, FAULTS, [], args.duration)
        t0 = time.perf_counter()
        keeping = [math.inf]

        def progress(stage: str, _done: int, _total: int) -> None:
            if stage == "keep":
                keeping[0] = min(keeping[0], time.perf_counter())

        result = run_fuzz(
            specs,
            parse_checks(args.check),
            Path(folder) / "fuzz.parquet",
            workers=args.workers,
            shrink_runs=20,
            progress=progress,
        )
        wall = time.perf_counter() - t0
        runs_s = min(keeping[0], t0 + wall) - t0
    rows = result.rows
    went_wrong = sum(r.get("status") != "ok" for r in rows)
    failing = sum(bool(r.get("check")) for r in rows)
    checks = Counter(r["check"] for r in rows if r.get("check"))
    per_run = wall / args.runs
    thousand = per_run * 1000
    figures = {
        "date": datetime.date.today().isoformat(),
        "scenario": args.scenario,
        "runs": args.runs,
        "workers": args.workers,
        "duration_s": args.duration,
        "wall_s": round(wall, 1),
        "runs_per_minute": round(60 / per_run, 1),
        "sim_s_per_wall_s": round(args.duration / per_run, 1),
        "runs_s": round(runs_s, 1),
        "keep_s": round(wall - runs_s, 1),
        "failing": failing,
        "failed_checks": dict(checks),
        "went_wrong": went_wrong,
        "one_thousand_runs_s": round(thousand),
        "goal_s": GOAL_S,
        "met": thousand <= GOAL_S,
    }
    print(
        f"{args.runs} runs of {args.duration:g} s of {args.scenario} on {args.workers} workers: "
        f"{wall:.0f} s ({60 / per_run:.1f} runs a minute; runs {runs_s:.0f} s, keeping and "
        f"shrinking the {failing} that failed a check {wall - runs_s:.0f} s "
        f"({dict(checks) or 'none'}); {went_wrong} went wrong); 1,000 runs "
        + ("took" if args.runs == 1000 else "would take")
        + f" {thousand / 60:.1f} min: goal <= {GOAL_S / 60:.0f} min "
        + ("met" if figures["met"] else "NOT met")
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
