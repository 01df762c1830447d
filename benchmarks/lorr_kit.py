"""The League of Robot Runners' kit mode as the fleet grows: fleetsim's own time a tick (the
loop: the action model, delays, errands, paths, the environments) beside the entries' time,
on a 170 x 500 warehouse laid out as the kit's largest (`fleetsim.bench.lorr`).
    python benchmarks/lorr_kit.py --robots 1000 5000 10000 --ticks 200 \\
        --entries ../shared/lorr/kit-python     # the kit's example entries (else fleetsim's)
Each size runs in a fresh process (`fleetsim bench --lorr` does the same for its table).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--entries", default=None, help="a folder with the kit's python/user_*")
    args = parser.parse_args()
    print(f"{'robots':>8} {'loop ms/tick':>13} {'entries ms/tick':>16}  entries' split")
    for n in args.robots:
        code = (
            "import json, sys; from fleetsim.bench.lorr import run_case; "
            f"print(json.dumps(run_case({n}, {args.ticks}, {args.entries!r})))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        row = json.loads(done.stdout.strip().splitlines()[-1])
        split = row["entry_ms_per_tick"]
        shown = ", ".join(f"{k} {v:.2f}" for k, v in split.items() if v >= 0.005)
        print(f"{n:>8,} {row['loop_ms_per_tick']:>13.2f} {sum(split.values()):>16.2f}  {shown}")


if __name__ == "__main__":
    main()
