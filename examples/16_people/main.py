"""People in the warehouse: pickers walking among a fleet under its fleet manager.

The bundled `warehouse` (100 robots, fleet manager) with 60 pickers who start at pick faces and
walk from face to face (a `people:` group), more arriving at 120 an hour. The people keep off
the racks and give robots a berth; robots slow and stop for people ahead. It prints how close
robots and people came, the contacts, and who waited for whom; --picture draws the floor from
above with the people on it (matplotlib, `fleetsim[viz]`):
    python examples/16_people/main.py --picture people.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def picture(sim: object, path: Path) -> None:
    """The floor from above: racks, robots (blue), people (orange)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fleetsim.rl.top_view import TopView

    robots, _ = sim.people.robots()  # type: ignore[attr-defined]
    view = TopView(sim.site, sim.people.level, 900)  # type: ignore[attr-defined]
    image = view.draw(robots.centres, np.zeros(len(robots.centres)), robots.radii)
    rows, cols = view.pixels(sim.people.positions)  # type: ignore[attr-defined]
    plt.figure(figsize=(9, image.shape[0] / 100), dpi=100)
    plt.imshow(image)
    plt.scatter(cols, rows, s=6, color="tab:orange")
    plt.axis("off")
    plt.savefig(path, bbox_inches="tight")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1200, help="steps of 0.1 s")
    parser.add_argument("--picture", type=Path, help="draw the floor at the end here (PNG)")
    args = parser.parse_args()
    plain = build(load_scenario("warehouse", []))
    faces = ", ".join(plain.sim.site.graph.nodes_with("pickup")[::4])
    plain.sim.close()
    group = f"{{name: pickers, count: 60, rate_per_hour: 120, from: [{faces}], to: [{faces}], "
    built = build(load_scenario("warehouse", [f"people={{groups: [{group}trips: 20}}]}}"]))
    with built.sim as sim:
        summary = run_scenario(built, duration=args.steps * sim.params.timestep)
        k = summary.kpis
        print(f"people: {k['people_added']} came, {k['people_arrived']} left, "
              f"{k['people_now']} on the floor")  # fmt: skip
        print(f"robot-person contacts: {k['person_contacts']}, closest gap: "
              f"{k['closest_person_gap_m']} m")  # fmt: skip
        print(f"robots waited {k['robot_wait_for_people_s']} s for people (slowed "
              f"{k['robot_slowed_for_people_s']} s); people waited "
              f"{k['people_wait_for_robots_s']} s for robots")  # fmt: skip
        if args.picture:
            picture(sim, args.picture)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")


if __name__ == "__main__":
    main()
