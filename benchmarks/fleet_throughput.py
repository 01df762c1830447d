"""Throughput against fleet size on the bundled warehouse: the same order stream (more
orders than any fleet here can serve), the fleet grown until congestion caps it.
    python benchmarks/fleet_throughput.py --robots 10 25 50 75 100 150 200 300 --seconds 1800
Prints tasks per hour, cycle time, waiting and deadlocks per fleet size, and writes a PNG of
throughput against robots when matplotlib is installed (--png).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def run(robots: int, seconds: float, rate: float) -> dict[str, float]:
    loaded = load_scenario(
        "warehouse",
        [
            f"robots[0].start.random={robots}",
            f"site.layout.parking_rows={max(3, math.ceil(1.1 * robots / 39))}",  # 39 columns
            f"plugins[0].params.tasks.poisson.rate_per_hour={rate}",
            f"simulation.duration={seconds}",
        ],
    )
    built = build(loaded)
    t0 = time.perf_counter()
    with built.sim:
        summary = run_scenario(built)
    k = summary.kpis
    return {
        "robots": robots,
        "per_hour": k["throughput_per_hour"],
        "p50": k["cycle_time_s"]["p50"] or float("nan"),
        "waiting": k["waiting_time_s"] / max(robots * seconds, 1e-9),
        "deadlocks": k["deadlocks"],
        "unresolved": k["deadlocks_unresolved"],
        "collisions": summary.collisions,
        "wall": time.perf_counter() - t0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[25, 50, 100, 150])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--rate", type=float, default=15.0, help="orders/hour per pick face")
    parser.add_argument("--png", type=Path, help="also plot throughput against robots")
    args = parser.parse_args()
    print(
        f"{'robots':>6} {'tasks/h':>8} {'p50 cycle s':>11} {'waiting':>8} {'deadlocks':>9} "
        f"{'unresolved':>10} {'collisions':>10} {'wall s':>7}"
    )
    rows = []
    for n in args.robots:
        r = run(n, args.seconds, args.rate)
        rows.append(r)
        print(
            f"{n:>6} {r['per_hour']:>8.0f} {r['p50']:>11.1f} {r['waiting']:>8.0%} "
            f"{r['deadlocks']:>9.0f} {r['unresolved']:>10.0f} {r['collisions']:>10.0f} "
            f"{r['wall']:>7.1f}"
        )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot([r["robots"] for r in rows], [r["per_hour"] for r in rows], "o-")
        ax.set_xlabel("robots")
        ax.set_ylabel("tasks per hour")
        ax.set_title("warehouse: throughput against fleet size")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
