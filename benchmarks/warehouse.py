"""The bundled warehouse at fleet scale: the site grown with the fleet, the reference fleet manager
with traffic control, step time and real-time factor side by side with the fleet's numbers.
    python benchmarks/warehouse.py --robots 100 1000 5000 --seconds 600
    python benchmarks/warehouse.py --robots 1000 --seconds 3600     # the simulated hour

The layout for N robots is `fleetsim.bench.fleet.layout_for` (at 100 robots the bundled
`warehouse` exactly); `fleetsim bench --fleet 1000,5000,10000` runs the same in fresh processes
and reports the targets.
"""

from __future__ import annotations

import argparse

from fleetsim.bench.fleet import layout_for
from fleetsim.bench.fleet import run_fleet as run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--seconds", type=float, default=600.0, help="simulated seconds")
    args = parser.parse_args()
    print(
        f"{'robots':>6} {'layout':>26} {'build s':>7} {'ms/step':>7} {'RTF':>6} "
        f"{'tasks/h':>7} {'waiting':>7} {'collisions':>10} {'near':>5} "
        f"{'deadlocks':>9} {'unresolved':>10} {'stalls':>6}"
    )
    for n in args.robots:
        r = run(n, args.seconds)
        w = layout_for(n)
        layout = f"{w['aisles']}x{w['blocks']}, {w['stations']} st, {w['parking_rows']} rows"
        print(
            f"{n:>6} {layout:>26} {r['build_s']:>7.1f} {r['ms_per_step']:>7.2f} "
            f"{r['rtf']:>5.1f}x {r['per_hour']:>7.0f} {r['waiting']:>7.0%} "
            f"{r['collisions']:>10.0f} {r['near_misses']:>5.0f} {r['deadlocks']:>9.0f} "
            f"{r['unresolved']:>10.0f} {r['stalls']:>6.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
