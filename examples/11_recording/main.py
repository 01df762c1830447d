"""Record a run to an MCAP file, leave a stretch out, and analyse it from the file.

Runs the bundled `warehouse` scenario (100 robots, the reference fleet manager), records it at
5 frames a simulated second with the fleet's states and tasks, leaves the middle fifth of the
run out (`pause()`, `resume()`), then reads the file back as arrays: who drove how far while
recorded, which tasks were done and how long they took. Open the same file in Foxglove to
watch it, or make it a page of plots with `fleetsim report`. Needs `fleetsim[record]`. Run:
    python examples/11_recording/main.py                  # 5 simulated minutes
    python examples/11_recording/main.py --out run.mcap   # keep the file
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
from pathlib import Path

import numpy as np

import fleetsim.recording
from fleetsim.recording import record
from fleetsim.scenario import build, load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps of 0.1 s")
    parser.add_argument("--out", type=Path, help="keep the recording here (a .mcap file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = args.out or Path(folder) / "run.mcap"
        built = build(load_scenario("warehouse"), duration=args.steps * 0.1)
        with built.sim as sim:
            recorder = record(sim, out, rate=5, metadata={"scenario": "warehouse"})
            for plugin in built.plugins:  # states, tasks and KPIs from the fleet manager
                if hasattr(plugin, "manager"):
                    recorder.watch_fleet(plugin.manager)
            fifth = args.steps // 5
            for part in range(5):
                if part == 2:
                    recorder.pause()  # a stretch not worth keeping
                for _ in range(fifth if part < 4 else args.steps - 4 * fifth):
                    sim.step_once()
                if part == 2:
                    recorder.resume()
            recorder.close()
            simulated = sim.sim_time
        print(f"recorded {recorder.frames} frames to {out} ({out.stat().st_size / 1e3:.0f} kB)")

        with fleetsim.recording.open(out) as recording:
            frames = list(recording.frames())
            events = recording.events()
        times = np.array([frame.time for frame in frames])
        gap = int(np.argmax(np.diff(times)))
        print(
            f"frames from {times[0]:.1f} s to {times[-1]:.1f} s, none from {times[gap]:.1f} s "
            f"to {times[gap + 1]:.1f} s (paused)"
        )
        driven = dict.fromkeys(frames[0].names, 0.0)
        for before, after in itertools.pairwise(frames):
            if after.time - before.time > 0.3 or before.names != after.names:
                continue  # across the pause, or the fleet changed: not one robot's step
            steps = np.linalg.norm(after.xyz[:, :2] - before.xyz[:, :2], axis=1)
            for name, metres in zip(after.names, steps.tolist(), strict=True):
                driven[name] += metres
        busiest = sorted(driven.items(), key=lambda item: -item[1])[:3]
        print("drove farthest:", ", ".join(f"{name} {metres:.1f} m" for name, metres in busiest))
        done = [e for e in events if e["kind"] == "task_done"]
        cycle = [e["cycle_time_s"] for e in done]
        mean = f", mean cycle time {statistics.mean(cycle):.1f} s" if cycle else ""
        print(f"tasks done while recording: {len(done)}{mean}")
        print(f"simulated {simulated:.2f} s in {args.steps} steps")


if __name__ == "__main__":
    main()
