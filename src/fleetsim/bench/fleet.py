"""The fleet manager at scale: the bundled warehouse grown with the fleet, run through the
reference fleet manager (tasks, traffic control, near misses) for a simulated time.

For N robots (s = N / 100) the layout has round(20 s^0.4) aisles in round(2 s^0.3) blocks,
round(10 s^0.78) drop-off stations (as many as fit) and enough parking rows for every robot
plus a tenth; at 100 robots that is the bundled `warehouse` exactly. Orders arrive at 2 an hour
per pick face, so demand grows with the site. Used by `fleetsim bench --fleet` and
`benchmarks/warehouse.py`.
"""

from __future__ import annotations

import math
import time
from typing import Any

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def layout_for(robots: int) -> dict[str, int]:
    """The warehouse layout for `robots` robots (see the module's text)."""
    s = robots / 100
    aisles = round(20 * s**0.4)
    columns = 2 * aisles - 1  # parking columns, one under every cross-lane node
    return {
        "aisles": aisles,
        "blocks": round(2 * s**0.3),
        "stations": min(round(10 * s**0.78), columns - 1),
        "parking_rows": max(3, math.ceil(1.1 * robots / columns)),
    }


def run_fleet(robots: int, seconds: float, *extra: str) -> dict[str, Any]:
    """Build and run the grown warehouse for `seconds` simulated seconds (`extra`: further
    scenario overrides); its row: build and step times, the real-time factor and the fleet's
    numbers (tasks, waiting, collisions, near misses, deadlocks, stalls)."""
    overrides = [f"site.layout.{k}={v}" for k, v in layout_for(robots).items()]
    overrides += [f"robots[0].start.random={robots}", f"simulation.duration={seconds}", *extra]
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
        "seconds": seconds,
        "build_s": t1 - t0,
        "wall_s": wall,
        "ms_per_step": 1e3 * wall / max(steps, 1),
        "rtf": seconds / wall,
        "per_hour": k["throughput_per_hour"],
        "done": k["tasks_completed"],
        "waiting": k["waiting_time_s"] / max(robots * seconds, 1e-9),
        "collisions": summary.collisions,
        "near_misses": sum(k["near_misses"].values()),
        "deadlocks": k["deadlocks"],
        "unresolved": k["deadlocks_unresolved"],
        "stalls": k["stalls"],
    }
