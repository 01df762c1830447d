"""Where a sweep's runs go: `local` (a process pool on this machine) or `ray` (Ray tasks on a
local Ray instance or an existing cluster). Both run `worker.run_one` and yield rows as runs
finish, keeping at most a few runs per worker in flight, so a sweep of any length holds only
those in memory.
"""

from __future__ import annotations

import multiprocessing
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.sweep.plan import RunSpec
from fleetsim.sweep.worker import quiet, run_one

IN_FLIGHT_PER_WORKER = 2
RUNS_PER_WORKER_PROCESS = 100  # a fresh process now and then: no slow build-up over long sweeps
PROBE_TIMEOUT_S = 5.0
RAY_NEEDS = 'the ray backend needs Ray: pip install "fleetsim[ray]"'


def crashed(spec: RunSpec, why: str) -> dict[str, Any]:
    """The row of a run whose worker died under it (a crash, or out of memory)."""
    return {
        "run_id": spec.run_id,
        **spec.values,
        "seed": spec.seed,
        "status": "failed",
        "error": why,
        "overrides": list(spec.overrides),
        "wall_time_s": None,
    }


Work = Callable[[RunSpec], dict[str, Any]]  # a run to a row (picklable: a module's function)


def run_local(
    specs: Sequence[RunSpec], workers: int, work: Work = run_one
) -> Iterator[dict[str, Any]]:
    """Runs in `workers` processes (spawned: each makes its own PyBullet client); `work` makes
    each run's row (`worker.run_one` for a sweep)."""
    pending = list(reversed(specs))
    while pending:
        fresh: dict[str, Any] = {}  # (Python 3.11 and later)
        if sys.version_info >= (3, 11):
            fresh["max_tasks_per_child"] = RUNS_PER_WORKER_PROCESS
        pool = ProcessPoolExecutor(
            workers, multiprocessing.get_context("spawn"), quiet, (), **fresh
        )
        running: dict[Future[dict[str, Any]], RunSpec] = {}
        try:
            while pending or running:
                while pending and len(running) < workers * IN_FLIGHT_PER_WORKER:
                    spec = pending.pop()
                    running[pool.submit(work, spec)] = spec
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    row = future.result()
                    del running[future]
                    yield row
        except BrokenProcessPool:  # a worker died: the runs it had fail, the sweep goes on
            for future, spec in running.items():
                ok = future.done() and not future.cancelled() and future.exception() is None
                yield (
                    future.result()
                    if ok
                    else crashed(spec, "the worker process died (a crash, or out of memory)")
                )
        except BaseException:  # stopped (Ctrl-C, a signal, the caller gone): end the runs too
            _end_workers(pool)
            raise
        finally:  # (also when the sweep is stopped: do not wait for the runs under way)
            pool.shutdown(wait=False, cancel_futures=True)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's worker processes: a stopped sweep must not wait, at exit, for the
    runs they are in the middle of (workers started with SIGINT ignored never hear Ctrl-C)."""
    processes = getattr(pool, "_processes", None) or {}  # (CPython's pool keeps them there)
    for process in list(processes.values()):
        if process.is_alive():
            process.terminate()


_started_ray = [False]  # whether the Ray now running is a local instance fleetsim started


def connect_ray(address: str | None, workers: int) -> Any:
    """Ray, connected: a local instance with `workers` CPUs (address None or "local"), or the
    cluster at `address` ("auto", "ray://host:10001", "host:6379"). Errors before any run.
    A Ray the program had already started is used as it is (and left running after the runs)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_NEEDS) from None
    if ray.is_initialized():
        return ray
    if address not in (None, "local", "auto"):
        _probe(address)
    options: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": "ERROR",
        "configure_logging": True,
    }
    try:
        if address in (None, "local"):
            ray.init(num_cpus=workers, include_dashboard=False, **options)
            _started_ray[0] = True
        else:
            ray.init(address=address, **options)
    except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
        raise ConfigError(
            f"--ray-address {address}: cannot reach a Ray cluster there "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
            "start one with `ray start --head` or leave --ray-address out for a "
            "local instance"
        ) from None
    return ray


def _probe(address: str) -> None:
    """A TCP connection to the cluster's address, answered within `PROBE_TIMEOUT_S` (Ray itself
    retries an unreachable address for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection(
            (host.strip("[]") or "127.0.0.1", int(port)), timeout=PROBE_TIMEOUT_S
        ):
            return
    except ValueError:
        why = "expected auto, HOST:PORT or ray://HOST:PORT"
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
    raise ConfigError(
        f"--ray-address {address}: cannot reach a Ray cluster there ({why}); "
        "start one with `ray start --head`, or leave --ray-address out for a "
        "local Ray"
    )


def run_ray(
    specs: Sequence[RunSpec], workers: int, address: str | None, work: Work = run_one
) -> Iterator[dict[str, Any]]:
    """Runs as Ray tasks (one CPU each, no retries: a failed run is a row)."""
    ray = connect_ray(address, workers)
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_run)
        slots = max(int(ray.cluster_resources().get("CPU", workers)), 1) * IN_FLIGHT_PER_WORKER
        pending = list(reversed(specs))
        running: dict[Any, RunSpec] = {}
        while pending or running:
            while pending and len(running) < slots:
                spec = pending.pop()
                running[task.remote(work, spec)] = spec
            (ref,), _ = ray.wait(list(running), num_returns=1)
            spec = running.pop(ref)
            try:
                yield ray.get(ref)
            except ray.exceptions.RayError as exc:  # the task's worker died
                yield crashed(spec, f"the Ray task failed: {str(exc).splitlines()[0]}")
    finally:
        if _started_ray[0]:  # a local Ray of fleetsim's own goes with its runs
            ray.shutdown()
            _started_ray[0] = False


def _ray_run(work: Work, spec: RunSpec) -> dict[str, Any]:
    quiet_once()
    return work(spec)


_quieted = [False]


def quiet_once() -> None:
    """Quiet a worker once (its stdout goes nowhere; it dies with its parent)."""
    if not _quieted[0]:
        quiet()
        _quieted[0] = True
