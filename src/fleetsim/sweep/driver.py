"""Running a plan: skip what the results file has (`resume`), hand the rest to a backend,
store each row as it comes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.sweep.backends import Work, connect_ray, run_local, run_ray
from fleetsim.sweep.plan import Plan, RunSpec
from fleetsim.sweep.store import ResultStore
from fleetsim.sweep.worker import run_one

BACKENDS = ("local", "ray")
MAX_WORKERS = 1024


@dataclass
class SweepResult:
    """What a sweep did: the rows, the file, and the counts of runs done, failed and skipped."""

    rows: list[dict[str, Any]]  # every row in the file (earlier sweeps' too, when resumed)
    ran: int  # runs done now
    skipped: int  # runs the file already had
    failed: int  # of those done now


def run_sweep(
    plan: Plan,
    out: Path,
    *,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    details: bool = False,
    progress: Callable[[int, int, dict[str, Any] | None], None] | None = None,
) -> SweepResult:
    """Run `plan`, rows to the Parquet file `out`. `progress(done, total, row)` after each run
    (and once with row None before the first)."""
    store = prepare(out, workers, backend, ray_address, resume or retry_failed)
    done = store.done()
    folder = out.with_name(out.stem + ".runs") if details else None
    if folder is not None:
        folder.mkdir(exist_ok=True)
    specs = plan.runs(folder)
    todo = [s for s in specs if s.run_id not in done or (retry_failed and done[s.run_id] != "ok")]
    if progress is not None:
        progress(0, len(todo), None)
    failed = 0
    try:
        for k, row in enumerate(rows_of(todo, backend, workers, ray_address), start=1):
            store.add(row)
            failed += row.get("status") != "ok"
            if progress is not None:
                progress(k, len(todo), row)
    finally:
        store.close()
    return SweepResult(store.rows(), len(todo), len(specs) - len(todo), failed)


def prepare(
    out: Path, workers: int, backend: str, ray_address: str | None, resume: bool
) -> ResultStore:
    """Check the options and the results file, connect to Ray: every error before any run."""
    if backend not in BACKENDS:
        raise ConfigError(f"--backend {backend}: choose local or ray")
    if not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f"--workers {workers}: expected 1 to {MAX_WORKERS}")
    if backend == "local" and ray_address is not None:
        raise ConfigError("--ray-address is for --backend ray")
    store = ResultStore(out, resume=resume)
    if backend == "ray":
        connect_ray(ray_address, workers)  # an unreachable cluster: said before any run
    return store


def rows_of(
    todo: list[RunSpec], backend: str, workers: int, address: str | None, work: Work = run_one
) -> Iterator[dict[str, Any]]:
    """The rows of the runs `todo`, as they finish, on `backend` (`work` makes each row)."""
    if not todo:
        return iter(())
    if backend == "ray":
        return run_ray(todo, workers, address, work)
    return run_local(todo, workers, work)
