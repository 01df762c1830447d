"""Does guided search find failures in fewer runs than new seeds? The example's weak fleet
manager (examples/12_fuzz/laps.yaml) with faults that rarely break it: stops of 1-4 s, 6 an
hour per robot (its robots are 6 s apart, so a stop must last longer to be run into). The same
number of runs, uniform (a new seed each) and guided (half new seeds, half mutants of the runs
that came closest: smallest gap between robots), repeated with other seeds; failing runs
counted.

    python benchmarks/fuzz_search.py --runs 20 --repeats 3
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from fleetsim.fuzz import fuzz_specs, parse_checks, run_fuzz

LAPS = Path(__file__).parents[1] / "examples" / "12_fuzz" / "laps.yaml"
FAULTS = {"robots": [{"type": "stop", "rate_per_hour": 6, "duration": [1, 4]}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for search in ("uniform", "guided"):
        failing, first, wall = 0, [], 0.0
        for rep in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:
                specs = fuzz_specs(str(LAPS), args.runs, 1 + 1000 * rep, FAULTS, [], args.duration)
                t0 = time.perf_counter()
                result = run_fuzz(
                    specs,
                    parse_checks("robot-collisions"),
                    Path(folder) / "fuzz.parquet",
                    workers=args.workers,
                    shrink_runs=0,
                    search=search,
                )
                wall += time.perf_counter() - t0
            rows = sorted(result.rows, key=lambda r: r["run"])
            found = [k for k, r in enumerate(rows, start=1) if r.get("check")]
            failing += len(found)
            first.append(found[0] if found else None)
        print(
            f"{search:8s} {failing:3d} failing of {args.runs * args.repeats} runs; first "
            f"failure at run {first} (per repeat); {wall:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
