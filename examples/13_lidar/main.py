"""A warehouse fleet with lidars and safety fields: the scans live, and in a recording.

The bundled `warehouse` (100 robots, fleet manager) with `mobile_robot_lidar` (a lidar of 360
beams, 20 m, 10 Hz) and safety fields sized from each robot's footprint and speed. It reads the
fleet's scans as one (robots x beams) array as they come, records the run (four robots' scans
as Foxglove `LaserScan`s, their fields as line loops) and reads the scans back from the file;
--picture draws a recorded scan (matplotlib, `fleetsim[viz]`). Open the file in Foxglove:
    python examples/13_lidar/main.py --out run.mcap --picture scan.png
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import fleetsim.recording
from fleetsim.scenario import build, load_scenario

FLEET = ["robots[0].model=mobile_robot_lidar", "robots[0].safety_fields={auto: true}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="steps of 0.1 s")
    parser.add_argument("--out", type=Path, help="keep the recording here (a .mcap file)")
    parser.add_argument("--picture", type=Path, help="draw a recorded scan here (PNG)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = args.out or Path(folder) / "run.mcap"
        built = build(load_scenario("warehouse", FLEET))
        with built.sim as sim:
            hits: list[float] = []  # (the fleet's scans, one array each time they come)
            seen = lambda _, groups: hits.append(np.isfinite(groups[0].ranges).mean())  # noqa: E731
            sim.events.on("lidar_scanned", seen)
            recorder = fleetsim.recording.record(sim, out, rate=5)  # four robots' scans
            for _ in range(args.steps):
                sim.step_once()
            recorder.close()
            (group,) = sim.lidars.groups
            print(f"{len(group)} lidars, {len(hits)} scans, {np.mean(hits):.0%} of beams hit")
            totals = sim.safety.totals(sim.sim_time)
            print(f"safety fields: {totals['protective_stops']} protective stops, "
                  f"{totals['slowed_s']:.0f} robot-s slowed")  # fmt: skip
            steps = sim.step_count
        with fleetsim.recording.open(out) as recording:
            for robot in recording.scanned():
                scans = list(recording.scans(robot))
                nearest = min(float(np.min(s.ranges[s.ranges > 0], initial=np.inf)) for s in scans)
                print(f"recorded {robot}: {len(scans)} scans, nearest hit {nearest:.2f} m")
            if args.picture:
                draw(recording, scans[-1], args.picture)
        print(f"simulated {steps * 0.1:.2f} s in {args.steps} steps")


def draw(recording: Any, scan: Any, path: Path) -> None:
    """The site's racks and walls (the recording's static boxes) and a recorded scan (red)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 7), dpi=110)
    centres, sizes, _ = recording.static_boxes()  # (the warehouse's racks stand square)
    for (x, y, _), (w, h, _) in zip(centres, sizes, strict=True):
        if w * h < 1000:  # (the floor is a box too: left out)
            ax.add_patch(plt.Rectangle((x - w / 2, y - h / 2), w, h, color="0.6"))
    hits = scan.world_points()
    for hit in hits:
        ax.plot(*np.stack((scan.pose[:2], hit), 1), color="tab:red", lw=0.3, alpha=0.4)
    ax.scatter(hits[:, 0], hits[:, 1], s=4, color="tab:red", zorder=3)
    ax.set_aspect("equal")
    ax.autoscale()
    ax.set_title(f"a recorded scan at {scan.time:.1f} s: {len(hits)} of {scan.ranges.size} hit")
    fig.savefig(path, bbox_inches="tight")
    print(f"picture: {path}")


if __name__ == "__main__":
    main()
