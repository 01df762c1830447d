"""One fuzz run, in a worker: the scenario with its faults and a seed, run to the end (or to its
wall-time limit), checked. The row says whether a check failed, which, and when first; a
failing run's row carries the faults that happened, written out, so that the run can be kept
and reproduced without running it again."""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetsim.fuzz.checks import Check, Watch, first_failure
from fleetsim.fuzz.outside import OutsideManager
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.drivers import without_drivers
from fleetsim.scenario.faults_plugin import FaultsPlugin
from fleetsim.scenario.runner import run_scenario
from fleetsim.sweep.plan import RunSpec


@dataclass(frozen=True)
class FuzzWork:
    """`work` for the sweep backends: a run's spec to its fuzz row (picklable)."""

    checks: tuple[Check, ...]
    wall_limit_s: float | None = None
    manager: OutsideManager | None = None

    def __call__(self, spec: RunSpec) -> dict[str, Any]:
        """The row of the run `spec`."""
        return fuzz_one(spec, list(self.checks), self.wall_limit_s, manager=self.manager)


def fuzz_one(
    spec: RunSpec,
    checks: list[Check],
    wall_limit_s: float | None = None,
    record: Path | None = None,
    manager: OutsideManager | None = None,
) -> dict[str, Any]:
    """Run `spec` and check it (recording it to `record`, when given; with an outside
    `manager` driving the robots, when given); the row (never raises for a run that went
    wrong)."""
    started = time.perf_counter()
    row: dict[str, Any] = {
        "run_id": spec.run_id,
        **spec.values,
        "seed": spec.seed,
        "status": "ok",
        "error": None,
        "check": None,
        "first_failure_s": None,
    }
    try:
        loaded = load_scenario(spec.scenario, spec.overrides)
        if manager is not None:  # the outside manager drives: the scenario's own drivers go
            without_drivers(loaded.scenario)
        pace = manager.rtf if manager is not None else 0.0
        built = build(loaded, target_rtf=pace, gui=None, duration=spec.duration, seed=spec.seed)
        served: Any = contextlib.nullcontext()
        if manager is not None:  # its files (its log) in the run's folder
            folder = Path(spec.details or tempfile.mkdtemp(prefix="fleetsim-fuzz-run-"))
            served = manager.serving(built, folder, spec.seed)
        with built.sim as sim, served:
            watch = Watch(sim, built.scene.robots)
            if record is not None:
                from fleetsim.recording import record as start_recording  # (an extra)

                start_recording(sim, record, 10.0, {"scenario_file": spec.scenario})
            limit = [False]

            def progress(_t: float, _rtf: float) -> None:
                if wall_limit_s is not None and time.perf_counter() - started > wall_limit_s:
                    limit[0] = True
                    sim.stop()

            summary = run_scenario(built, progress=progress)
            faults = next((p.injector for p in built.plugins if isinstance(p, FaultsPlugin)), None)
            managers = [getattr(p, "manager", None) for p in built.plugins]
            deadlocks = [d for m in managers if m is not None for d in m.traffic.deadlocks]
            failed = first_failure(checks, summary, watch, deadlocks)
            row.update(
                status="timeout" if limit[0] else "ok",
                sim_time_s=summary.sim_time,
                robots=summary.robots,
                collisions=summary.collisions,
                tasks_completed=summary.kpis.get("tasks_completed"),
                faults=len(faults.records) if faults is not None else 0,
                near_misses=sum(summary.kpis.get("near_misses", {}).values()),
                waiting_s=summary.kpis.get("waiting_time_s"),
                min_gap_m=watch.min_gap_m if math.isfinite(watch.min_gap_m) else None,
            )
            events = faults.schedule_rows() if faults is not None else []
            row["schedule"] = json.dumps(events)  # (kept for failing runs and guided search)
            if failed is not None:
                check, at = failed
                row.update(check=str(check), first_failure_s=at)
    except Exception as exc:  # the run itself went wrong: its row says why
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
    row["overrides"] = list(spec.overrides)
    row["wall_time_s"] = time.perf_counter() - started
    return row
