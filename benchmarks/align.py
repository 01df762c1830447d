"""Benchmark: driving with heading alignment (`set_goal`'s default) against driving without it.

N `simple_cube` robots 1 m apart, half of them driving to random points of the fleet's square,
0.1 s steps, with `[fast]` installed: goals set as the README sets them (`set_goal(pose)`, which
turns each robot to the goal's yaw, here 0, on the way), with a random goal yaw (every mover
turns), and with `align_orientation=False` (what `fleetsim bench` used to time). With
`--against DIR` (another checkout of fleetsim, e.g. a `git worktree` of older code) the
defaults also run on that code (issue 49's target: 100,000 robots at least twice the real-time
factor of the code of 2026-12-05).

Each variant runs in a process of its own (its memory its own), and the processes take turns
a few steps at a time (`--block`, a pause between turns for the last one's helper thread to
go to sleep), so the swings of a shared machine, which last seconds and move every phase of
a step alike, fall on every variant alike. Each of `--trips` times, every mover is sent to a
new random point (with a random goal yaw, every one of them turns at once) and `--steps`
steps are timed. A round is one such run; prints, for each variant, the median over
`--rounds` rounds of its median step time, the median of the rounds' ratios to driving
without alignment (and each round's), the worst variant last, and the most memory the fleet
took (RSS growth of its process from before building to the end, MB).
Example:
    python benchmarks/align.py --sizes 10000 100000 [--against ../old] [--json results/align.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    SimulationParams,
)

VARIANTS = ("align off", "defaults", "random goal yaw")
AGAINST = "defaults, --against"  # (the label of the other checkout's defaults)
SETTLE_S = 0.003  # between turns: a helper thread watches for work for about a millisecond
WARMUP = 10


def rss_mb() -> float:
    """This process's resident memory now, MB (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


class Fleet:
    """One variant's fleet: N robots 1 m apart, half of them (the movers) sent to goals."""

    def __init__(self, n: int, variant: str) -> None:
        self.sim = MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0, seed=0))
        self.side, self.variant = math.ceil(math.sqrt(n)), variant
        self.robots = AgentManager(self.sim).spawn_agents_grid(
            n,
            GridSpawnParams(x_max=self.side, y_max=self.side, spacing=1.0),
            AgentSpawnParams(urdf_path="simple_cube"),
        )
        self.rng = np.random.default_rng(1)
        self.movers = self.rng.choice(n, n // 2, replace=False).tolist()
        self.send()

    def send(self) -> None:
        """Every mover to a new random point (the same in every variant), with the variant's
        goal yaw. (One robot's numbers at a time: lists of them all would stay in the
        process's memory as the interpreter's, counted as the fleet's.)"""
        count = len(self.movers)
        points = self.rng.uniform(0, self.side, (count, 2))
        yaws = self.rng.uniform(-3.1, 3.1, count)
        for k, i in enumerate(self.movers):
            x, y, yaw = float(points[k, 0]), float(points[k, 1]), float(yaws[k])
            if self.variant == "align off":
                self.robots[i].set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
            elif self.variant == "defaults":
                self.robots[i].set_goal(Pose.from_xyz(x, y, 0.0))
            else:
                self.robots[i].set_goal(Pose.from_yaw(x, y, 0.0, yaw))


def serve(n: int, variant: str) -> None:
    """A variant's process: builds its fleet, then reads stdin a line at a time: a number of
    steps, answered with their wall milliseconds (a JSON line); "send", every mover sent to a
    new goal (untimed); an empty line ends it, answered with the memory the fleet took (MB)."""
    before = rss_mb()
    fleet = Fleet(n, variant)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        if line.strip() == "send":
            fleet.send()
            print(json.dumps({"sent": True}), flush=True)
            continue
        times = []
        for _ in range(int(line)):
            start = time.perf_counter()
            fleet.sim.step_once()
            times.append((time.perf_counter() - start) * 1e3)
        print(json.dumps({"ms": times}), flush=True)
    print(json.dumps({"mb": rss_mb() - before}), flush=True)
    fleet.sim.close()


class Side:
    """One variant's process (`serve`), with fleetsim from `checkout` (default: this one)."""

    def __init__(self, n: int, variant: str, checkout: Path | None) -> None:
        env = dict(os.environ)
        if checkout is not None:
            env["PYTHONPATH"] = str(checkout.resolve() / "src")
        command = [sys.executable, __file__, "--serve", str(n), variant]
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, line: str) -> dict[str, Any]:
        """Send a line; the answer (the process's next JSON line; other output is skipped)."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(line + "\n")
        stdin.flush()
        return self.answer()

    def answer(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            out = stdout.readline()
            if not out:
                raise RuntimeError(f"the benchmark's process ended (exit {self.process.wait()})")
            if out.startswith("{"):
                answer: dict[str, Any] = json.loads(out)
                return answer


def one_round(
    n: int, sides: dict[str, Path | None], steps: int, block: int, trips: int
) -> dict[str, Any]:
    """Each side's step times and memory, {label: (times, mb)}: `trips` times, every mover
    sent to a new goal, then `steps` steps, the sides taking turns `block` steps at a time."""
    running: dict[str, Side] = {}
    try:
        for label, checkout in sides.items():  # (built one after the other: memory its own)
            variant = "defaults" if label == AGAINST else label
            running[label] = Side(n, variant, checkout)
            running[label].answer()
        for side in running.values():  # (compiling, the first steps)
            side.ask(str(WARMUP))
            time.sleep(SETTLE_S)
        times: dict[str, list[float]] = {label: [] for label in running}
        order = list(running)
        for _ in range(trips):
            for side in running.values():
                side.ask("send")
            for turn in range(math.ceil(steps / block)):
                for label in order[turn % len(order) :] + order[: turn % len(order)]:
                    times[label] += running[label].ask(str(block))["ms"]
                    time.sleep(SETTLE_S)
        mb = {label: side.ask("")["mb"] for label, side in running.items()}
        return {label: (times[label], mb[label]) for label in running}
    finally:
        for side in running.values():  # (stdin closed: a process still reading it ends)
            if side.process.stdin is not None and not side.process.stdin.closed:
                side.process.stdin.close()
            try:
                side.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                side.process.kill()
                side.process.wait()


def report(n: int, rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Print and return each variant's median step time over the rounds and its ratio to
    driving without alignment: the median of the rounds' ratios (each round's variants ran
    side by side)."""
    ms = {v: [statistics.median(r[v][0]) for r in rounds] for v in rounds[0]}
    mb = {v: max(r[v][1] for r in rounds) for v in rounds[0]}
    results = []
    for variant in VARIANTS:
        mid = statistics.median(ms[variant])
        each = [a / b for a, b in zip(ms[variant], ms["align off"], strict=True)]
        ratio = statistics.median(each)
        results.append(
            {
                "robots": n,
                "variant": variant,
                "ms": mid,
                "ratio": ratio,
                "mb": mb[variant],
                "each": each,
            }
        )
        print(
            f"{n:>7} {variant:>16} {mid:>8.2f} {ratio:>6.2f} {mb[variant]:>6.0f}  ("
            + ", ".join(f"{r:.2f}" for r in each)
            + ")"
        )
    worst = max(results[1:], key=lambda r: r["ratio"])
    print(f"{n:>7} {'worst':>16} {'':>8} {worst['ratio']:>6.2f} ({worst['variant']})")
    if AGAINST in ms:
        here, there = ms["defaults"], ms[AGAINST]
        each = [b / a for a, b in zip(here, there, strict=True)]
        ratio = statistics.median(each)
        print(
            f"{n:>7} defaults: {statistics.median(here):.2f} ms a step here, "
            f"{statistics.median(there):.2f} with --against ({mb[AGAINST]:.0f} MB): {ratio:.2f}x "
            "its real-time factor (each round: " + ", ".join(f"{r:.2f}" for r in each) + ")"
        )
        results.append(
            {
                "robots": n,
                "variant": "against",
                "ms": here,
                "their_ms": there,
                "ratio": ratio,
                "each": each,
                "their_mb": mb[AGAINST],
            }
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--steps", type=int, default=30, help="timed steps of each variant")
    parser.add_argument("--block", type=int, default=5, help="steps a turn")
    parser.add_argument("--trips", type=int, default=4, help="new goals for every mover")
    parser.add_argument("--rounds", type=int, default=3, help="runs of the variants side by side")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--against", type=Path, help="another checkout to compare the defaults with"
    )
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)  # (a variant's process)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return
    sides: dict[str, Path | None] = {variant: None for variant in VARIANTS}
    if args.against:
        sides[AGAINST] = args.against
    results: list[dict[str, Any]] = []
    print(
        f"{'robots':>7} {'variant':>16} {'ms/step':>8} {'ratio':>6} {'MB':>6}  (each round's ratio)"
    )
    for n in args.sizes:
        rounds = [
            one_round(n, sides, args.steps, args.block, args.trips) for _ in range(args.rounds)
        ]
        results += report(n, rounds)
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
