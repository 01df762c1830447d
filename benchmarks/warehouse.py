"""The bundled warehouse at fleet scale: the site grown with the fleet, the reference fleet manager
with traffic control, step time and real-time factor side by side with the fleet's numbers.
    python benchmarks/warehouse.py --robots 100 1000 5000 --seconds 600
    python benchmarks/warehouse.py --robots 1000 --seconds 3600     # the simulated hour

For N robots (s = N / 100) the layout has round(20 s^0.4) aisles in round(2 s^0.3) blocks,
round(10 s^0.78) drop-off stations (as many as fit) and enough parking rows for every robot
plus a tenth; at 100 robots that is the bundled `warehouse` exactly. Orders arrive at 2 an hour
per pick face, so demand grows with the site.
"""

from __future__ import annotations

import argparse
import math
import time

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def layout_for(robots: int) -> dict[str, int]:
    s = robots / 100
    aisles = round(20 * s**0.4)
    columns = 2 * aisles - 1  # parking columns, one under every cross-lane node
    return {
        "aisles": aisles,
        "blocks": round(2 * s**0.3),
        "stations": min(round(10 * s**0.78), columns - 1),
        "parking_rows": max(3, math.ceil(1.1 * robots / columns)),
    }


def run(robots: int, seconds: float) -> dict[str, float]:
    overrides = [f"site.layout.{k}={v}" for k, v in layout_for(robots).items()]
    overrides += [f"robots[0].start.random={robots}", f"simulation.duration={seconds}"]
    t0 = time.perf_counter()
    built = build(load_scenario("warehouse", overrides))
    t1 = time.perf_counter()
    with built.sim:
        summary = run_scenario(built)
    wall = time.perf_counter() - t1
    k = summary.kpis
    steps = round(seconds / built.sim.params.timestep)
    return {
        "robots": robots,
        "build_s": t1 - t0,
        "ms_per_step": 1e3 * wall / max(steps, 1),
        "rtf": seconds / wall,
        "per_hour": k["throughput_per_hour"],
        "done": k["tasks_completed"],
        "waiting": k["waiting_time_s"] / max(robots * seconds, 1e-9),
        "collisions": summary.collisions,
        "near_misses": sum(k["near_misses"].values()),
        "deadlocks": k["deadlocks"],
        "unresolved": k["deadlocks_unresolved"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--seconds", type=float, default=600.0, help="simulated seconds")
    args = parser.parse_args()
    print(f"{'robots':>6} {'layout':>26} {'build s':>7} {'ms/step':>7} {'RTF':>6} "
          f"{'tasks/h':>7} {'waiting':>7} {'collisions':>10} {'near':>5} "
          f"{'deadlocks':>9} {'unresolved':>10}")  # fmt: skip
    for n in args.robots:
        r = run(n, args.seconds)
        w = layout_for(n)
        layout = f"{w['aisles']}x{w['blocks']}, {w['stations']} st, {w['parking_rows']} rows"
        print(f"{n:>6} {layout:>26} {r['build_s']:>7.1f} {r['ms_per_step']:>7.2f} "
              f"{r['rtf']:>5.1f}x {r['per_hour']:>7.0f} {r['waiting']:>7.0%} "
              f"{r['collisions']:>10.0f} {r['near_misses']:>5.0f} {r['deadlocks']:>9.0f} "
              f"{r['unresolved']:>10.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
