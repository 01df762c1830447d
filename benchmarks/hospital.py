"""The bundled hospital's hour (`fleetsim run hospital`): 30 robots, three floors, two lifts, a
door on each floor, orders all hour. Wall time and real-time factor, with the run's numbers
checked: every order released is done, no collision, no stall, no unresolved deadlock, both
lifts used (tests/site/test_hospital.py checks the first quarter hour step by step).
    python benchmarks/hospital.py [--json results/hospital.json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import write_json

from fleetsim.scenario import build, load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    started = time.perf_counter()
    built = build(load_scenario("hospital"))
    building = time.perf_counter() - started
    with built.sim as sim:
        sim.run_simulation()
        k = built.plugins[0].manager.kpis()  # type: ignore[attr-defined]
        simulated = sim.sim_time
    wall = time.perf_counter() - started
    trips = {name: v["trips"] for name, v in k["lifts"].items()}
    result = {
        "simulated_s": simulated,
        "wall_s": round(wall, 2),
        "build_s": round(building, 2),
        "rtf": round(simulated / wall, 1),
        "tasks_released": k["tasks_released"],
        "tasks_completed": k["tasks_completed"],
        "tasks_failed": k["tasks_failed"],
        "collisions": sum(k["collisions"].values()),
        "stalls": k["stalls"],
        "deadlocks_unresolved": k["deadlocks_unresolved"],
        "lift_rides": k["lift_rides"],
        "lift_trips": trips,
        "door_cycles": k["door_cycles"],
    }
    for key, value in result.items():
        print(f"{key:>22}  {value}")
    problems = [
        f"{k['tasks_completed']} of {k['tasks_released']} orders done"
        if k["tasks_completed"] != k["tasks_released"] or k["tasks_failed"]
        else "",
        f"{result['collisions']} collisions" if result["collisions"] else "",
        f"{k['stalls']} stalls" if k["stalls"] else "",
        f"{k['deadlocks_unresolved']} deadlocks unresolved" if k["deadlocks_unresolved"] else "",
        "a lift never used" if not all(trips.values()) else "",
    ]
    said = [p for p in problems if p]
    print("checked: " + ("; ".join(said) if said else "every order done, 0 collisions, 0 stalls"))
    if args.json:
        write_json(args.json, [result])
    raise SystemExit(1 if said else 0)


if __name__ == "__main__":
    main()
