"""One run of a sweep, in a worker process (a pool's or a Ray task's): build, run, one row.

The PyBullet client is created here, inside the worker. Whatever goes wrong in the run becomes
the row's `status` ("failed") and `error`: a sweep never loses its other runs to one.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path
from typing import Any

from fleetsim import jit, parallel
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.results import run_row, write_results
from fleetsim.scenario.runner import run_scenario
from fleetsim.sweep.plan import RunSpec

PR_SET_PDEATHSIG = 1  # prctl(2)


def die_with_parent() -> None:
    """This process is killed when the one that started it dies, even by SIGKILL (Linux's
    parent-death signal; elsewhere a no-op): a killed sweep leaves no worker behind, and the
    multiprocessing resource tracker, whose pipe the workers held, ends with them."""
    import multiprocessing

    started_by = multiprocessing.parent_process()  # None outside multiprocessing (Ray)
    # The starter's own pid: os.getppid() here may already be 1 when the sweep died during
    # this worker's start-up imports, and a worker compared with that would live on.
    parent = started_by.pid if started_by is not None and started_by.pid else os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def quiet() -> None:
    """A worker's stdout (PyBullet prints there from C) goes nowhere; the driver draws the
    progress bar. It dies with the sweep that started it. It runs many simulations, so it
    loads Numba (if installed) once and uses the compiled kernels at every fleet size
    (`jit.warm`: the same numbers, sooner), on one thread (`parallel.one_thread`)."""
    die_with_parent()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    logging.getLogger("fleetsim").setLevel(logging.ERROR)
    jit.warm()
    parallel.one_thread()  # (the sweep's other workers have the other cores)


def run_one(spec: RunSpec) -> dict[str, Any]:
    """Run `spec` to the end; the results row (never raises for a failed run)."""
    started = time.perf_counter()
    row: dict[str, Any] = {
        "run_id": spec.run_id,
        **spec.values,
        "seed": spec.seed,
        "status": "ok",
        "error": None,
    }
    try:
        loaded = load_scenario(spec.scenario, spec.overrides)
        built = build(loaded, target_rtf=0.0, gui=None, duration=spec.duration, seed=spec.seed)
        build_time = time.perf_counter() - started
        with built.sim:
            summary = run_scenario(built, build_time=build_time)
            row["seed"] = built.sim.params.seed
        row.update(run_row(summary, {}))
        if spec.details:
            meta = {
                "scenario": loaded.scenario.name,
                "scenario_file": spec.scenario,
                "seed": row["seed"],
                "overrides": list(spec.overrides),
            }
            write_results(Path(spec.details) / f"{spec.run_id}.json", summary, meta)
    except Exception as exc:  # the run failed: its row says why
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
    row["overrides"] = list(spec.overrides)
    row["wall_time_s"] = time.perf_counter() - started
    return row
