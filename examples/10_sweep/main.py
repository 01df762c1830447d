"""A sweep from Python: the warehouse at three fleet sizes over three seeds, in parallel.

The same as `fleetsim sweep warehouse --set robots[0].start.random=10,20,40 --seeds 1-3`:
each run in its own process, one Parquet row per run, then the mean and 95% interval of the
throughput per fleet size. Needs `pip install "fleetsim[sweep]"`.
    python examples/10_sweep/main.py               # 300 simulated seconds a run
    python examples/10_sweep/main.py --steps 600 --out sweep.parquet
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from fleetsim.sweep import make_plan, run_sweep
from fleetsim.sweep.stats import summarise

SIZES = "robots[0].start.random"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps of 0.1 s a run")
    parser.add_argument("--out", type=Path, help="keep the results here (a .parquet file)")
    args = parser.parse_args()
    plan = make_plan("warehouse", [f"{SIZES}=10,20,40"], "1-3", duration=args.steps * 0.1)
    with tempfile.TemporaryDirectory() as folder:
        out = args.out or Path(folder) / "sweep.parquet"

        def progress(done: int, total: int, row: dict | None) -> None:
            if row is None:
                print(f"running {total} runs on 2 workers ...", flush=True)
                return
            print(
                f"  {done}/{total}: {row.get('status')} ({SIZES}={row.get(SIZES)}, seed "
                f"{row.get('seed')})",
                flush=True,
            )

        result = run_sweep(plan, out, workers=2, progress=progress)
        print(f"{result.ran} runs, {result.failed} failed; results in {out}")
        lines = summarise(result.rows, [SIZES], ["throughput_per_hour", "utilisation"])
        for line in sorted(lines, key=lambda line: line[SIZES]):
            print(
                f"{line[SIZES]:>3} robots: {line['throughput_per_hour'].text():>16} tasks/h, "
                f"utilisation {line['utilisation'].text()}"
            )
        print(f"simulated {result.rows[0]['sim_time_s']:.2f} s in {args.steps} steps (each run)")


if __name__ == "__main__":
    main()
