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


def grown(robots: int, *extra: str) -> Any:
    """The warehouse grown for `robots` robots, built (`extra`: further scenario overrides)."""
    overrides = [f"site.layout.{k}={v}" for k, v in layout_for(robots).items()]
    overrides += [f"robots[0].start.random={robots}", *extra]
    return build(load_scenario("warehouse", overrides))


def run_fleet(robots: int, seconds: float, *extra: str) -> dict[str, Any]:
    """Build and run the grown warehouse for `seconds` simulated seconds (`extra`: further
    scenario overrides); its row: build and step times, the real-time factor, the fleet's
    numbers (tasks, waiting, collisions, near misses, deadlocks, stalls) and, with lidars,
    the rays a second of the sensing phase and the safety fields' share of the step (both
    over the last 100 steps)."""
    t0 = time.perf_counter()
    built = grown(robots, f"simulation.duration={seconds}", *extra)
    t1 = time.perf_counter()
    with built.sim as sim:
        summary = run_scenario(built)
        sensing = _sensing(sim)
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
        **sensing,
    }


def _sensing(sim: Any) -> dict[str, Any]:
    """Rays a second of the sensing phase and the safety fields' share of the step (the
    profiler's last 100 steps); nothing without lidars."""
    groups = sim.lidars.groups
    if not groups:
        return {}
    dt = sim.params.timestep
    rays_per_step = sum(len(g) * g.params.beams * min(1.0, g.params.rate * dt) for g in groups)
    profile = sim.get_profiling_stats()
    return {
        "rays_per_s": rays_per_step / max(profile["sensors"] / 1e3, 1e-12),
        "fields_share": profile["safety_fields"] / profile["total"],
        "protective_stops": sim.safety.totals(sim.sim_time)["protective_stops"],
    }
