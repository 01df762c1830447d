"""The benchmark suite behind `fleetsim bench`: fleets of N robots, fleetsim variants and the peer.

Every case runs in a fresh process (worker.py), fleetsim and peer cases alternating per N, so
the two see the same machine state. Variants:
- "fleetsim": closest-points narrow phase (the same work as the peer), lazy pose sync, PyBullet
  bodies made on demand (the defaults);
- "fleetsim-aabb": boxes only (reported separately);
- "fleetsim-eager": every robot a PyBullet body, poses pushed to it every step, as the GUI of
  other tools does;
- "peer": the pybullet-fleet package through its public API, when an interpreter has it.

Beside the fleet sizes: arms, a crowd of URDF robots, the dense workloads ("dense-omni",
"dense-diff": cubes 0.6 m apart, every one driving to random goals, tens of thousands of
contacts), the fleet manager at scale (the warehouse grown with the fleet, `bench.fleet`) and
the wall time of `fleetsim run warehouse`.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleetsim.models import resolve_urdf

WORKER = Path(__file__).with_name("worker.py")
VARIANTS: dict[str, dict[str, Any]] = {
    "fleetsim": {"impl": "fleetsim", "narrow": "closest_points", "sync": "auto"},
    "fleetsim-aabb": {"impl": "fleetsim", "narrow": "aabb", "sync": "auto"},
    "fleetsim-eager": {"impl": "fleetsim", "narrow": "closest_points", "sync": "eager"},
    # the fleet sizes' workload held out from tuning: 1 m apart; every robot driving
    "fleetsim-1m": {"impl": "fleetsim", "narrow": "closest_points", "sync": "auto", "spacing": 1.0},
    "fleetsim-all": {"impl": "fleetsim", "narrow": "closest_points", "sync": "auto", "movers": 1.0},
    "peer": {"impl": "peer"},
    "fleetsim-arms": {"impl": "arms"},  # N kinematic arms with joint sequences (not a fleet size)
    "fleetsim-crowd": {"impl": "crowd"},  # N mobile_robot URDFs crowded in one aisle
    "dense-omni": {"impl": "dense", "motion": "omnidirectional"},  # cubes 0.6 m apart, all driving
    "dense-diff": {"impl": "dense", "motion": "differential"},
    # the same held out from tuning: 0.7 m apart, each sent on as soon as it arrives
    "dense-omni-0.7": {"impl": "dense", "motion": "omnidirectional", "spacing": 0.7, "every": 1},
    "dense-diff-0.7": {"impl": "dense", "motion": "differential", "spacing": 0.7, "every": 1},
    "fleet": {"impl": "fleet"},  # the warehouse grown with the fleet, its fleet manager
    "sensors": {"impl": "sensors"},  # the same, every robot with a 360-beam lidar at 10 Hz
    "lorr": {"impl": "lorr"},  # the League of Robot Runners' kit mode on a large warehouse
}
DENSE = ("dense-omni", "dense-diff", "dense-omni-0.7", "dense-diff-0.7")
HELD_OUT = ("fleetsim", "fleetsim-1m", "fleetsim-all")  # the fleet sizes' real-time targets


@dataclass
class Suite:
    """The cases `fleetsim bench` runs (sizes, variants, the peer), each in a fresh process, and
    their results."""

    sizes: list[int]
    variants: list[str]
    steps: int = 100
    warmup: int = 20
    seed: int = 0
    peer_python: str | None = None
    peer_max: int = 10_000  # the peer's step time grows fast: larger fleets would take hours
    arms: int = 0  # also time this many kinematic arms (variant "fleetsim-arms")
    crowd: int = 0  # also time this many mobile_robot URDFs in one aisle ("fleetsim-crowd")
    dense: list[int] = field(default_factory=list)  # dense workloads of these sizes
    fleet: list[int] = field(default_factory=list)  # the fleet manager at these sizes
    fleet_seconds: float = 600.0  # simulated seconds of each fleet-manager run
    sensors: list[int] = field(default_factory=list)  # lidars on every robot, these sizes
    sensors_seconds: float = 30.0  # simulated seconds of each lidar run
    lorr: list[int] = field(default_factory=list)  # kit mode with these many robots
    lorr_ticks: int = 200  # ticks of each kit-mode run
    lorr_entries: str | None = None  # a folder with the kit's python/user_* entries
    warehouse: bool = False  # also time `fleetsim run warehouse` from start to end
    timeout_s: float = 1800.0
    results: list[dict[str, Any]] = field(default_factory=list)

    def run(self, progress: Any = print) -> list[dict[str, Any]]:
        """Run every case, the sides alternating, reporting each through `progress`; the rows."""
        urdf = resolve_urdf("simple_cube")

        def one(what: str, variant: str, n: int, stepped: bool = True, **more: Any) -> None:
            """Run `variant` with `n` robots (stepped: the suite's steps, warm-up and seed)."""
            progress(f"running {what} ...")
            case = {**VARIANTS[variant], "variant": variant, "n": n, **more}
            if stepped:
                case |= {"steps": self.steps, "warmup": self.warmup, "seed": self.seed}
            self.results.append(self._one(case))

        for n in self.sizes:
            order = self.variants if len(self.results) % 2 == 0 else list(reversed(self.variants))
            for variant in order:  # alternate the order from one N to the next
                if variant == "peer" and n > self.peer_max:
                    continue
                one(f"{variant} with {n} robots", variant, n, urdf=urdf)
        extra = (
            ("fleetsim-arms", self.arms, "kinematic arms"),
            ("fleetsim-crowd", self.crowd, "mobile_robot URDFs in one aisle"),
        )
        for variant, n, what in extra:
            if n:
                one(f"{n} {what}", variant, n)
        for n in self.dense:
            for variant in DENSE:
                kind = VARIANTS[variant]
                what = f"{n} {kind['motion']} cubes {kind.get('spacing', 0.6)} m apart"
                one(what, variant, n, urdf=urdf)
        for n in self.fleet:
            what = f"the warehouse's fleet manager with {n} robots"
            one(what, "fleet", n, stepped=False, seconds=self.fleet_seconds)
        for n in self.sensors:
            what = f"{n} robots with lidars under the fleet manager"
            one(what, "sensors", n, stepped=False, seconds=self.sensors_seconds)
        for n in self.lorr:
            what, ticks = f"LoRR kit mode with {n} robots", self.lorr_ticks
            one(what, "lorr", n, stepped=False, ticks=ticks, entries=self.lorr_entries)
        if self.warehouse:
            progress("timing fleetsim run warehouse ...")
            self.results.append(run_warehouse(self.timeout_s))
        return self.results

    def _one(self, case: dict[str, Any]) -> dict[str, Any]:
        python = self.peer_python if case["impl"] == "peer" and self.peer_python else sys.executable
        try:
            done = subprocess.run(
                [python, str(WORKER), json.dumps(case)],
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
            )
        except subprocess.TimeoutExpired:
            return {**case, "error": f"timed out after {self.timeout_s:.0f} s"}
        for line in done.stdout.splitlines():
            if line.startswith("BENCH-RESULT "):
                result: dict[str, Any] = json.loads(line.removeprefix("BENCH-RESULT "))
                return result
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {**case, "error": tail[0][:300]}

    def ratios(self) -> dict[int, float]:
        """Peer ms / fleetsim ms per N (same work: closest points), where both ran."""
        out = {}
        for n in self.sizes:
            ours = self._ms(n, "fleetsim")
            peer = self._ms(n, "peer")
            if ours and peer:
                out[n] = peer / ours
        return out

    def _ms(self, n: int, variant: str) -> float | None:
        for r in self.results:
            if r["n"] == n and r["variant"] == variant and "ms_per_step" in r:
                return float(r["ms_per_step"])
        return None

    def to_json(self) -> dict[str, Any]:
        """The suite's settings and results, for the JSON file."""
        return {
            "meta": {
                "date": time.strftime("%Y-%m-%d"),
                "machine": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "python": platform.python_version(),
                "workload": "N cube robots 2 m apart, omnidirectional, 0.1 s step, half driving to "
                "random goals (set_goal's defaults), collision check every step",
                "dense": "cubes 0.6 m apart (sent on every 25 steps) and 0.7 m apart (sent on "
                "as they arrive), every one driving to random goals of the fleet's square "
                "(omnidirectional and differential-drive); goals set with set_goal's defaults",
                "fleet": f"the warehouse grown with the fleet, its fleet manager, "
                f"{self.fleet_seconds:g} simulated seconds",
                "sensors": f"the warehouse grown with the fleet, every robot a 360-beam lidar "
                f"at 10 Hz (mobile_robot_lidar), its fleet manager, {self.sensors_seconds:g} "
                "simulated seconds; rays a second of the sensing phase",
                "lorr": f"LoRR kit mode, deterministic, {self.lorr_ticks} ticks on a 170 x 500 "
                f"warehouse; entries: {self.lorr_entries or 'fleetsim defaults'}",
            },
            "results": self.results,
            "peer_over_fleetsim": {str(n): r for n, r in self.ratios().items()},
        }


def run_warehouse(timeout_s: float, scenario: str = "warehouse") -> dict[str, Any]:
    """Wall seconds of `fleetsim run warehouse` (or `scenario`) in a fresh process, start
    (imports included) to end, as a user sees it."""
    case: dict[str, Any] = {"variant": "warehouse", "n": 0, "scenario": scenario}
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fleetsim", "run", scenario],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return {**case, "error": f"timed out after {timeout_s:.0f} s"}
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {**case, "error": tail[0][:300]}
    return {**case, "wall_s": wall}


# The targets fleetsim is measured against: (what, the result it reads, its goal, unit).
TARGETS = (
    ("1,000 robots: faster per step than the peer", ("ratio", 1000), 25.0, "x"),
    ("10,000 robots: real-time factor", ("rtf", 10_000), 30.0, "x"),
    ("100,000 robots: real-time factor", ("rtf", 100_000), 4.0, "x"),
    ("10,000 robots: spawn time", ("spawn_s", 10_000), 1.0, "s"),
    ("100,000 robots: spawn time", ("spawn_s", 100_000), 5.0, "s"),
    ("100,000 robots: memory", ("memory_mb", 100_000), 300.0, "MB"),
    ("200 mobile_robot URDFs in one aisle: real-time factor", ("crowd_rtf", 200), 100.0, "x"),
    ("dense, 10,000 omnidirectional: real-time factor", ("dense-omni", 10_000), 40.0, "x"),
    ("dense, 10,000 differential-drive: real-time factor", ("dense-diff", 10_000), 40.0, "x"),
    ("dense, 100,000 omnidirectional: real-time factor", ("dense-omni", 100_000), 6.0, "x"),
    ("dense, 100,000 differential-drive: real-time factor", ("dense-diff", 100_000), 6.0, "x"),
    ("dense, 100,000 robots: memory", ("dense_mb", 100_000), 300.0, "MB"),
    ("fleet manager, 1,000 robots: real-time factor", ("fleet", 1000), 150.0, "x"),
    ("fleet manager, 5,000 robots: real-time factor", ("fleet", 5000), 60.0, "x"),
    ("fleet manager, 10,000 robots: real-time factor", ("fleet", 10_000), 15.0, "x"),
    ("fleet manager, 10,000 robots: collisions and stalls", ("fleet_bad", 10_000), 0.0, ""),
    ("LoRR kit mode, 10,000 robots: the loop's time a tick", ("lorr", 10_000), 10.0, "ms"),
    ("lidars, 1,000 robots x 360 beams: million rays a second", ("rays", 1000), 20.0, "M/s"),
    ("lidars, 1,000 robots at 10 Hz, fleet manager: real-time factor", ("sensors", 1000), 5.0, "x"),
)


def targets(suite: Suite) -> list[tuple[str, str, str, bool | None]]:
    """(what, measured, goal, met) per target; measured is "not run" (met None) when the run
    did not include the case (add it to --sizes, --peer, --crowd 200, --dense, --fleet)."""
    rows: list[tuple[str, str, str, bool | None]] = []
    for what, (kind, n), goal, unit in TARGETS:
        value = _measure(suite, kind, n)
        at_most = unit in ("s", "ms", "MB", "")  # times, memory, counts: limits; the rest floors
        if unit == "":
            goal_text = f"{goal:g}"
        else:
            goal_text = f"{'<' if at_most else '>='} {goal:g} {unit}".replace(" x", "x")
        if value is None:
            rows.append((what, "not run", goal_text, None))
            continue
        met = (value <= goal if unit == "" else value < goal) if at_most else value >= goal
        digits = 0 if value >= 100 or unit == "" else 1 if value >= 10 else 2
        measured = f"{value:,.{digits}f} {unit}".replace(" x", "x").strip()
        rows.append((what, measured, goal_text, met))
    return rows


def _measure(suite: Suite, kind: str, n: int) -> float | None:
    if kind == "ratio":
        return suite.ratios().get(n)
    if kind == "rtf":  # the worst of the workload and its held-out variants
        found = [
            float(r["rtf"])
            for r in suite.results
            if r["variant"] in HELD_OUT and r["n"] == n and "error" not in r
        ]
        return min(found) if found else None
    if kind in ("dense-omni", "dense-diff"):  # the worst of the spacings
        found = [
            float(r["rtf"])
            for r in suite.results
            if r["variant"] in (kind, f"{kind}-0.7") and r["n"] == n and "error" not in r
        ]
        return min(found) if found else None
    named = {
        "crowd_rtf": "fleetsim-crowd",
        "fleet_bad": "fleet",
        "dense_mb": "dense-omni",
        "rays": "sensors",
    }
    variant = named.get(kind, kind if kind in VARIANTS else "fleetsim")
    for r in suite.results:
        if r["variant"] != variant or "error" in r or (n and r["n"] != n):
            continue
        if kind == "spawn_s":
            return float(r["spawn_s"])
        if kind == "memory_mb":
            return float(r["bytes_per_robot"]) * n / 1e6
        if kind == "dense_mb":  # the more of the two kinds
            both = [
                x
                for x in suite.results
                if x["variant"] in DENSE and x["n"] == n and "error" not in x
            ]
            return max(float(x["bytes_per_robot"]) * n / 1e6 for x in both)
        if kind == "fleet_bad":
            return float(r["collisions"] + r["stalls"])
        if kind == "lorr":
            return float(r["loop_ms_per_tick"])
        if kind == "rays":
            return float(r["rays_per_s"]) / 1e6
        return float(r["rtf"])
    return None


def peer_installed(python: str | None) -> bool:
    """Whether `pybullet-fleet` is importable by the interpreter `python`."""
    if python:
        try:
            check = subprocess.run(
                [python, "-c", "import pybullet_fleet"], capture_output=True, timeout=120
            )
        except OSError:  # no such interpreter
            return False
        return check.returncode == 0
    return importlib.util.find_spec("pybullet_fleet") is not None


def plot(results: list[dict[str, Any]], path: Path) -> bool:
    """A PNG of real-time factor against N (needs matplotlib: pip install 'fleetsim[bench]')."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant in dict.fromkeys(r["variant"] for r in results):
        rows = sorted((r["n"], r["rtf"]) for r in results if r["variant"] == variant and "rtf" in r)
        if rows:
            ax.plot(*zip(*rows, strict=True), marker="o", label=variant)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="real time")
    ax.set(xscale="log", yscale="log", xlabel="robots", ylabel="real-time factor (0.1 s step)")
    ax.set_title("fleetsim: real-time factor against fleet size")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
