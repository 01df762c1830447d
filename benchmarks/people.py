"""Benchmark: people (`fleetsim.people`): the RiMEA tests in full, and people beside the fleet.

- RiMEA 1 (one person, 40 m of a 2 m corridor at 1.33 m/s: 26-34 s), 4 (the fundamental
  diagram: the mean speed in a periodic 30 m x 4 m corridor at 0.5 to 5 people a square
  metre, 60 s, three seeds, beside Weidmann's curve), 6 (20 people round a corner: none in a
  wall), 12 (150 people leave a 10 m x 10 m room through a 1 m corridor: a jam, the flow);
- the warehouse grown to 100 / 1,000 robots under its fleet manager with 1,000 / 10,000
  people: nine in ten walking from pick face to pick face (a `people:` group, the section's
  defaults), one in ten workers on a shift with a behaviour tree (`picker_shift.xml`, the
  bundled one): the real-time factor (targets: 100x and 10x), the same fleet without
  people, and what a person and a robot cost a step (µs each: the target, a person no more
  than a robot).

    python benchmarks/people.py [--seconds 30] [--plot diagram.png] [--json results/people.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim.bench.fleet import grown
from fleetsim.people import rimea

DENSITIES = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)
CASES = ((100, 1000, 100.0), (1000, 10_000, 10.0))  # robots, people, the target factor


def rimea_rows() -> list[dict[str, Any]]:
    """Each RiMEA test's measure and whether it passes."""
    rows: list[dict[str, Any]] = []
    t1 = rimea.corridor_time()
    rows.append({"test": 1, "measure": "seconds for 40 m", "value": t1, "pass": 26 <= t1 <= 34})
    for density in DENSITIES:
        speeds = [rimea.fundamental_diagram(density, seconds=60.0, seed=s).speed
                  for s in range(3)]  # fmt: skip
        expected = float(rimea.weidmann_speed(density))
        rows.append({"test": 4, "measure": f"speed at {density:g}/m^2",
                     "value": float(np.mean(speeds)), "weidmann": expected})  # fmt: skip
    speeds = [r["value"] for r in rows if r["test"] == 4]
    falling = all(a > b for a, b in itertools.pairwise(speeds))
    for row in rows[1:]:
        row["pass"] = bool(falling and abs(row["value"] - row["weidmann"]) < 0.25)
    corner = rimea.corner(20)
    rows.append({"test": 6, "measure": "seconds round the corner", "value": corner.seconds,
                 "pass": bool(corner.deepest <= 0 and not corner.left_corridor
                              and np.isfinite(corner.seconds))})  # fmt: skip
    neck = rimea.bottleneck(150, limit_s=600.0)
    rows.append({"test": 12, "measure": "people a second through 1 m", "value": neck.flow,
                 "jam": neck.crowded, "pass": bool(neck.crowded >= 10 and neck.deepest <= 0
                                                   and np.isfinite(neck.seconds))})  # fmt: skip
    return rows


def fleet_rtf(robots: int, people: int, seconds: float) -> float:
    """Real-time factor of the grown warehouse with `people` on the floor (0: none), who start
    at the pick faces (one in ten of them): nine in ten walk from face to face, one in ten
    work a shift as the bundled tree says."""
    extra = []
    if people:
        plain = grown(robots)
        faces = plain.sim.site.graph.nodes_with("pickup")[::10]
        plain.sim.close()
        names = ", ".join(faces)
        workers = people // 10
        walkers = f"{{name: pickers, count: {people - workers}, from: [{names}], to: [{names}], " \
                  "trips: 50}"  # fmt: skip
        shift = (f"{{name: workers, count: {workers}, from: [{names}], behavior: "
                 "picker_shift.xml, blackboard: {rounds: 20, break_room: bottom_5, "
                 "exit: bottom_0}}")  # fmt: skip
        extra.append(f"people={{groups: [{walkers}, {shift}]}}")
    built = grown(robots, *extra)
    try:
        sim, dt = built.sim, built.sim.params.timestep
        for _ in range(20):
            sim.step_once()
        steps, start = 0, time.perf_counter()
        while steps * dt < seconds:
            sim.step_once()
            steps += 1
        return float(steps * dt / (time.perf_counter() - start))
    finally:
        built.sim.close()


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """The fundamental diagram beside Weidmann's curve (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    rho = np.linspace(0.3, 5.3, 100)
    ax.plot(rho, rimea.weidmann_speed(rho), color="0.4", label="Weidmann (1993)")
    measured = [(float(r["measure"].split()[2].split("/")[0]), r["value"])
                for r in rows if r["test"] == 4]  # fmt: skip
    ax.plot(*zip(*measured, strict=True), "o", color="tab:blue", label="fleetsim")
    ax.set_xlabel("density (people a square metre)")
    ax.set_ylabel("mean speed (m/s)")
    ax.set_title("RiMEA test 4: the fundamental diagram")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="simulated s a fleet case")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = rimea_rows()
    for row in rows:
        print(json.dumps(row))
    if args.plot:
        plot(rows, args.plot)
    fleet = []
    for robots, people, target in CASES:
        alone = fleet_rtf(robots, 0, args.seconds)
        both = fleet_rtf(robots, people, args.seconds)
        dt = 0.1  # (the warehouse's step)
        per_person = 1e6 * (dt / both - dt / alone) / people  # µs a step, each person
        per_robot = 1e6 * (dt / alone) / robots  # µs a step, each robot (collision checks too)
        fleet.append({"robots": robots, "people": people, "rtf": both, "rtf_without_people": alone,
                      "target": target, "us_per_person": per_person,
                      "us_per_robot": per_robot})  # fmt: skip
        print(f"{robots:>5} robots, {people:>6} people: {both:6.1f}x real time (target "
              f"{target:g}x); without people {alone:.1f}x; a person {per_person:.2f} us a "
              f"step, a robot {per_robot:.2f} us")  # fmt: skip
    if args.json:
        write_json(args.json, rows + fleet)


if __name__ == "__main__":
    main()
