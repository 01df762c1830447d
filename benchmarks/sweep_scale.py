"""Sweeps on this machine: the same 20-run sweep with one worker, two workers and Ray (a local
instance with two CPUs), side by side; then many small runs, with the driver's memory sampled
as they go and the results file checked.

    python benchmarks/sweep_scale.py [--runs 20] [--duration 120] [--many 1000]

The 20 runs are the warehouse (fleet manager, traffic control) at 10 and 20 robots over 10
seeds; the small runs are one robot for 2 simulated seconds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fleetsim.sweep import make_plan, run_sweep
from fleetsim.sweep.store import read_rows

TINY = """\
name: tiny
simulation: {timestep: 0.1, target_rtf: 0, duration: 2, seed: 1}
robots:
  - {name: r, model: simple_cube, pose: [0, 0, 0], actions: [{type: move_to, pose: [1, 0, 0]}]}
"""
KPIS = ("tasks_completed", "distance_m", "throughput_per_hour")


def rss_mb() -> float:
    """This process's resident memory now (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def timed(plan: Any, folder: Path, name: str, **options: Any) -> tuple[float, dict[Any, Any]]:
    out = folder / f"{name}.parquet"
    started = time.perf_counter()
    result = run_sweep(plan, out, **options)
    wall = time.perf_counter() - started
    assert result.failed == 0, [r["error"] for r in result.rows if r["status"] != "ok"]
    rows = {
        (r["robots[0].start.random"], r["seed"]): tuple(r[k] for k in KPIS) for r in read_rows(out)
    }
    return wall, rows


def parallel(runs: int, duration: float, folder: Path) -> None:
    seeds = f"1-{max(runs // 2, 1)}"
    plan = make_plan("warehouse", ["robots[0].start.random=10,20"], seeds, duration)
    n = len(plan.runs())
    one, a = timed(plan, folder, "one", workers=1)
    two, b = timed(plan, folder, "two", workers=2)
    print(
        f"{n} warehouse runs ({duration:g} s each): 1 worker {one:.1f} s, 2 workers {two:.1f} s "
        f"({one / two:.2f}x)",
        flush=True,
    )
    try:
        ray_s, c = timed(plan, folder, "ray", workers=2, backend="ray")
    except Exception as exc:  # Ray missing: said, not fatal
        print(f"ray: {exc}")
        return
    print(
        f"ray, a local instance with 2 CPUs: {ray_s:.1f} s ({one / ray_s:.2f}x one worker, "
        f"startup included); KPIs equal to the local runs: {a == b == c}",
        flush=True,
    )


def many(count: int, folder: Path) -> None:
    scenario = folder / "tiny.yaml"
    scenario.write_text(TINY)
    plan = make_plan(str(scenario), [], f"1-{count}")
    samples: list[tuple[int, float]] = []

    def progress(done: int, total: int, row: Any) -> None:
        if done % max(count // 20, 1) == 0:
            samples.append((done, rss_mb()))

    out = folder / "many.parquet"
    started = time.perf_counter()
    result = run_sweep(plan, out, workers=2, progress=progress)
    wall = time.perf_counter() - started
    rows = read_rows(out)
    ok = len(rows) == count and len({r["run_id"] for r in rows}) == count
    ok = ok and sorted(r["seed"] for r in rows) == list(range(1, count + 1))
    first = statistics.mean(m for _, m in samples[: max(len(samples) // 4, 1)])
    last = statistics.mean(m for _, m in samples[-max(len(samples) // 4, 1) :])
    print(
        f"{count} small runs, 2 workers: {wall:.1f} s ({count / wall:.1f} runs/s), "
        f"{result.failed} failed; driver memory {first:.0f} MB in the first quarter, "
        f"{last:.0f} MB in the last ({', '.join(f'{m:.0f}' for _, m in samples)}); "
        f"file correct (one row per run, every seed once): {ok}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--many", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.runs:
            parallel(args.runs, args.duration, Path(folder))
        if args.many:
            many(args.many, Path(folder))


if __name__ == "__main__":
    main()
