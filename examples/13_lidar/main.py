"""Every robot of a warehouse fleet with a 2-D lidar: the fleet's scans as one array.

Runs the bundled `warehouse` (100 robots under the fleet manager) with `mobile_robot_lidar`, the
bundled AMR carrying a lidar (360 beams all round, 20 m, 10 Hz), reads the fleet's scans as one
(robots x beams) float32 array each time they scan, and reports what they saw: how much of each
scan hit something, and how near each robot came to an obstacle or another robot. With
--picture, draws one robot's last scan on the site plan (needs matplotlib, `fleetsim[viz]`):
    python examples/13_lidar/main.py
    python examples/13_lidar/main.py --picture scan.png
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.scenario import build, load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="steps of 0.1 s")
    parser.add_argument("--picture", type=Path, help="draw one robot's last scan here (PNG)")
    args = parser.parse_args()
    built = build(load_scenario("warehouse", ["robots[0].model=mobile_robot_lidar"]))
    with built.sim as sim:
        nearest, hits, scans = np.full(100, np.inf), [], 0

        def seen(sim: Any, groups: list[Any]) -> None:  # every scan of the fleet at once
            nonlocal scans
            ranges = groups[0].ranges  # (robots, beams) float32, +inf where nothing is in range
            hits.append(np.isfinite(ranges).mean())
            np.minimum(nearest, np.nanmin(np.where(ranges > 0, ranges, np.inf), 1), out=nearest)
            scans += 1

        sim.events.on("lidar_scanned", seen)
        for _ in range(args.steps):
            sim.step_once()
        (group,) = sim.lidars.groups
        print(f"{len(group)} lidars of {group.params.beams} beams scanned {scans} times")
        print(f"share of beams that hit something: {np.mean(hits):.0%}")
        print(f"nearest anything came to a lidar: {nearest.min():.2f} m (median robot's: "
              f"{np.median(nearest):.2f} m)")  # fmt: skip
        print(f"sensing took {sim.get_profiling_stats()['sensors']:.2f} ms a step")
        if args.picture:
            draw(sim, group, args.picture)
        print(f"simulated {sim.sim_time:.2f} s in {args.steps} steps")


def draw(sim: Any, group: Any, path: Path) -> None:
    """The racks, walls and robots as boxes, and one robot's last scan (red)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bodies = sim.world.bodies
    rows = bodies.rows(group.owners)  # the robot nearest the middle of the site
    k = int(np.argmin(np.linalg.norm(bodies["pos"][rows] - bodies["pos"].mean(0), axis=1)))
    scan = sim.lidars.scan_of(int(group.ids[k]))
    origin, world = np.array(scan.pose[:2]), scan.world_points()
    fig, ax = plt.subplots(figsize=(12, 7), dpi=110)
    lo, hi = bodies["aabb_min"], bodies["aabb_max"]
    for k in range(len(bodies)):
        colour = "tab:blue" if bodies["robot"][k] else "0.6"
        ax.add_patch(plt.Rectangle(lo[k, :2], *(hi[k, :2] - lo[k, :2]), color=colour, lw=0))
    for hit in world:
        ax.plot(*np.stack((origin, hit), 1), color="tab:red", lw=0.3, alpha=0.4)
    ax.scatter(world[:, 0], world[:, 1], s=4, color="tab:red", zorder=3)
    ax.set_aspect("equal")
    ax.autoscale()
    ax.set_title(f"a robot's scan at {scan.stamp:.1f} s: {len(world)} of {scan.ranges.size} hit")
    fig.savefig(path, bbox_inches="tight")
    print(f"picture: {path}")


if __name__ == "__main__":
    main()
