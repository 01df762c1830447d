"""`fleetsim fuzz`: many seeded runs of a scenario with faults, checked; the failing ones kept
and shrunk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fleetsim.cli.scenario import EXIT_FAILURE, exit_for, handle_stop_signals
from fleetsim.errors import FleetSimError


def fuzz(
    scenario: str = typer.Argument(..., help="A scenario file or bundled name."),
    runs: int = typer.Option(100, "--runs", help="How many seeded runs."),
    faults: str | None = typer.Option(
        None,
        "--faults",
        help="A faults: section (a YAML file, or inline YAML) for every run, replacing the "
        "scenario's.",
    ),
    check: str = typer.Option(
        "collisions,stalls,failed-tasks",
        "--check",
        help="What a run must not do (comma-separated): collisions, robot-collisions, stalls, "
        "failed-tasks, failed-actions, deadlocks, task-timeout=SECONDS.",
    ),
    first_seed: int = typer.Option(1, "--first-seed", help="The first run's seed."),
    sets: list[str] = typer.Option([], "--set", help="key.path=value for every run."),
    duration: float | None = typer.Option(None, "--duration", help="Simulated seconds a run."),
    workers: int | None = typer.Option(
        None, "--workers", help="Runs at once (default: the number of CPUs)."
    ),
    backend: str = typer.Option("local", "--backend", help="local (a process pool) or ray."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="A Ray cluster."),
    out: Path = typer.Option(Path("fuzz.parquet"), "--out", help="The results (Parquet)."),
    resume: bool = typer.Option(False, "--resume", help="Skip runs already in --out."),
    wall_limit: float | None = typer.Option(
        None, "--wall-limit", help="Wall seconds a run may take (then it is stopped: timeout)."
    ),
    shrink_runs: int = typer.Option(
        60, "--shrink-runs", help="Runs each failing run's shrinking may take (0: no shrinking)."
    ),
    manager: str | None = typer.Option(
        None,
        "--manager",
        help="An outside fleet manager to fuzz: a command started for each run, with "
        "{broker}, {url}, {host}, {port}, {folder} and {seed} filled in (the scenario's own "
        "drivers are turned off).",
    ),
    interface: str = typer.Option(
        "vda5050", "--interface", help="How --manager drives the robots: vda5050 or rmf."
    ),
    rtf: float = typer.Option(
        1.0, "--rtf", help="With --manager: the pace, times real time (it lives in wall time)."
    ),
    search: str = typer.Option(
        "uniform",
        "--search",
        help="uniform (a new seed each run) or guided (half the runs mutate the faults of the "
        "runs that came closest to failing).",
    ),
    allow_timeouts: bool = typer.Option(
        False,
        "--allow-timeouts",
        help="Runs stopped at --wall-limit do not make the exit code 1 (they are still counted).",
    ),
) -> None:
    """Run SCENARIO with faults for --runs seeds, check each run, keep and shrink the failures.

    One row per run in --out (seed, status, the check that failed and when it first failed,
    faults, robots, tasks done). Each failing run is kept in OUT.failures/RUN_ID/: failing.yaml
    (`fleetsim run` makes it again: the seed, the duration and the faults that happened written
    out), shrunk.yaml (fewer faults, robots and seconds, still failing the same check), their
    recordings (with the record extra) and summary.json (which says why, when there is no
    shrunk.yaml). Exit 1 when a run failed a check, went wrong, or was stopped at --wall-limit
    (unless --allow-timeouts); exit 2 for bad input, found before the first run.

    --manager fuzzes an outside fleet manager: each run serves its robots over --interface (a
    broker or the RMF API of its own on 127.0.0.1), starts the command, paces at --rtf and
    stops the command at the end; its log is in OUT.runs/RUN_ID/manager.log.
    """
    from fleetsim.fuzz import fuzz_specs, parse_checks, run_fuzz
    from fleetsim.fuzz.inputs import check_out, read_faults
    from fleetsim.fuzz.outside import OutsideManager

    console = Console(stderr=True)
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    handle_stop_signals()  # (Ctrl-C stops it even when started with SIGINT ignored)
    try:
        checks = parse_checks(check)
        check_out(out)
        outside = OutsideManager(manager, interface, rtf) if manager is not None else None
        section, source = read_faults(faults) if faults else (None, None)
        specs = fuzz_specs(scenario, runs, first_seed, section, sets, duration, source, check=True)
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("runs", total=None, status="")

            def progress(stage: str, done: int, total: int) -> None:
                bar.update(
                    task,
                    description=stage,
                    completed=done,
                    total=total,
                    status=f"{n_workers} workers" if stage == "runs" else "shrinking",
                )

            result = run_fuzz(
                specs,
                checks,
                out,
                workers=n_workers,
                backend=backend,
                ray_address=ray_address,
                resume=resume,
                wall_limit_s=wall_limit,
                shrink_runs=max(0, shrink_runs),
                manager=outside,
                search=search,
                progress=progress,
            )
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt:
        journal = (
            [p for p in out.parent.glob(out.name + "*") if p.is_file()]
            if out.parent.is_dir()
            else []
        )
        if journal:
            typer.echo(
                f"stopped: the runs done are in {out} (and its journal); --resume carries on",
                err=True,
            )
        else:
            typer.echo(
                f"stopped before any run finished: nothing written ({out} was not made)", err=True
            )
        raise typer.Exit(130) from None
    failing = [r for r in result.rows if r.get("check")]
    _print_failures(failing, result.failing, result.unkept)
    wrong = [r for r in result.rows if r.get("status") == "failed"]
    timed_out = [r for r in result.rows if r.get("status") == "timeout" and not r.get("check")]
    for row in wrong[:10]:  # why each went wrong
        typer.echo(f"went wrong: seed {row.get('seed')}: {row.get('error')}", err=True)
    typer.echo(
        f"{result.ran} runs, {len(failing)} failed a check, {len(wrong)} went wrong, "
        f"{len(timed_out)} timed out (--wall-limit), {result.skipped} already in the "
        f"file; results: {out}"
    )
    if failing or wrong or (timed_out and not allow_timeouts):
        raise typer.Exit(EXIT_FAILURE)


def _print_failures(
    failing: list[dict[str, Any]], kept: dict[str, Path], unkept: dict[str, str]
) -> None:
    if not failing:
        return
    table = Table(title="failing runs")
    for name in ("seed", "check", "first at (s)", "faults", "robots", "kept"):
        table.add_column(name)
    for row in failing[:50]:
        folder = kept.get(row["run_id"])
        table.add_row(
            str(row.get("seed")),
            str(row["check"]),
            f"{row['first_failure_s']:.1f}",
            str(row.get("faults")),
            str(row.get("robots")),
            _kept(folder, unkept.get(row["run_id"])),
        )
    Console().print(table)
    for row in failing[:50]:
        folder = kept.get(row["run_id"])
        why = _why_not_shrunk(folder)
        if why:
            typer.echo(f"not shrunk: {folder}: {why}")


def _kept(folder: Path | None, error: str | None) -> str:
    """Where a failure is kept (or why it is not)."""
    return str(folder) if folder is not None else f"(not kept: {error})"


def _why_not_shrunk(folder: Path | None) -> str | None:
    """Why a kept failure has no shrunk case (None: it has one)."""
    summary = folder / "summary.json" if folder is not None else None
    if summary is None or not summary.is_file():
        return None
    why: str | None = json.loads(summary.read_text()).get("not_shrunk")
    return why
