"""`fleetsim lorr run INPUT.json`: a League of Robot Runners problem with the kit's entries (or
fleetsim's), on the kit's rules; the kit's output JSON, a summary, fleetsim's results."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import ConfigError, EntryTimeoutError, FleetSimError
from fleetsim.faults import FaultPlan
from fleetsim.lorr.continuous import ContinuousRun, ContinuousSettings
from fleetsim.lorr.entries import find_entries, is_default
from fleetsim.lorr.examples import problem_path
from fleetsim.lorr.kit import Entries, KitRun, KitTiming
from fleetsim.lorr.mapf import hosting, load_entry
from fleetsim.lorr.output import write_kit_output
from fleetsim.lorr.problem import load_problem
from fleetsim.lorr.recording import KitRecorder
from fleetsim.lorr.summary import STALL_TICKS, run_row, write_lorr_results
from fleetsim.outputs import check_writable

app = typer.Typer(
    help="League of Robot Runners: host its entries on its problems.", no_args_is_help=True
)

MODES = ("kit", "continuous")


@app.command("run")
def run(
    problem_file: str = typer.Argument(..., help="The kit's input JSON, or a bundled problem."),
    planner: Path | None = typer.Option(None, "--planner", help="pyMAPFPlanner file."),
    scheduler: Path | None = typer.Option(None, "--scheduler", help="pyTaskScheduler file."),
    executor: Path | None = typer.Option(None, "--executor", help="pyExecutor file."),
    mode: str = typer.Option(
        "kit", "--mode", help="kit: the kit's rules; continuous: the plans on fleetsim's robots."
    ),
    deterministic: bool = typer.Option(
        False, "--deterministic", help="Treat every entry as prompt (runs repeat exactly)."
    ),
    ticks: int = typer.Option(
        5000, "--simulation-time", "--simulationTime", "-s", help="Ticks to run."
    ),
    plan_ms: int = typer.Option(
        1000, "--plan-time-limit", "--planTimeLimit", "-t", help="The plan period (ms)."
    ),
    tick_ms: int = typer.Option(100, "--action-time", "-a", help="One tick's budget (ms)."),
    initial_ms: int = typer.Option(
        1000, "--initial-plan-time-limit", "-n", help="The first plan's limit (ms)."
    ),
    process_ms: int = typer.Option(
        100, "--process-plan-time-limit", "-x", help="process_new_plan's limit (ms)."
    ),
    preprocess_ms: int = typer.Option(
        30000,
        "--preprocess-time-limit",
        "--preprocessTimeLimit",
        "-p",
        help="initialize's limit (ms).",
    ),
    output: Path = typer.Option(
        Path("output.json"), "--output", "-o", help="The kit's output JSON."
    ),
    screen: int = typer.Option(
        1,
        "--output-screen",
        "--outputScreen",
        "-c",
        help="Output detail: 1 all, 2 paths and events, 3 summary.",
    ),
    storage: str = typer.Option(
        "",
        "--file-storage-path",
        "--fileStoragePath",
        "-f",
        help="env.file_storage_path for the entries.",
    ),
    results: Path | None = typer.Option(
        None, "--results", help="fleetsim's results (.json, .csv or .parquet)."
    ),
    record: Path | None = typer.Option(
        None, "--record", help="Also write an MCAP recording (Foxglove: map, robots, errands)."
    ),
    cell_m: float = typer.Option(1.0, "--cell-m", help="Continuous mode: metres a grid cell."),
    robot_model: str = typer.Option(
        "simple_cube", "--robot-model", help="Continuous mode: the robots' catalogue model."
    ),
    max_speed: float = typer.Option(
        1.5, "--max-speed", help="Continuous mode: the robots' top speed (m/s)."
    ),
    tick_s: float | None = typer.Option(
        None,
        "--tick-s",
        help="Continuous mode: simulated seconds a tick (default: --cell-m / --max-speed, "
        "the time a robot at top speed crosses a cell, as a kit robot does in a tick).",
    ),
    faults: str | None = typer.Option(
        None,
        "--faults",
        help="Continuous mode: fleetsim's faults (a faults: section, as YAML "
        "or a file; robots a0, a1, ...).",
    ),
    compare: bool = typer.Option(
        False, "--compare", help="Continuous mode: also run kit mode on the same input, seeds."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress."),
) -> None:
    """Run a LoRR problem as the start kit does: the entries given, else the kit's
    python/user_*/py*.py in this folder, else fleetsim's defaults."""
    if mode not in MODES:
        raise exit_for(ConfigError(f"--mode {mode!r}: choose kit or continuous"))
    if screen not in (1, 2, 3):
        raise exit_for(ConfigError(f"--output-screen {screen}: choose 1, 2 or 3"))
    timing = KitTiming(
        ticks=ticks,
        plan_ms=plan_ms,
        tick_ms=tick_ms,
        initial_ms=initial_ms,
        process_ms=process_ms,
        preprocess_ms=preprocess_ms,
        deterministic=deterministic,
    )
    files = find_entries({"planner": planner, "scheduler": scheduler, "executor": executor})
    kit: KitRun | None = None
    try:
        timing.check()
        check_writable(output, "--output", (".json",))
        if results is not None:
            check_writable(results, "--results", (".json", ".csv", ".parquet"))
        if record is not None:
            check_writable(record, "--record", (".mcap",))
        problem = load_problem(problem_path(problem_file))
        for kind, path in files.items():
            unused = (
                " (not used in continuous mode)" if kind == "executor" and mode != "kit" else ""
            )
            typer.echo(f"{kind}: {'fleetsim default' if is_default(path) else path}{unused}")
        if faults is not None and mode != "continuous":
            raise ConfigError(
                "--faults: fleetsim's faults act on its robots: add --mode continuous"
            )
        if mode == "continuous":
            settings = ContinuousSettings(
                cell_m=cell_m, model=robot_model, max_linear_vel=max_speed, tick_s=tick_s
            )
            plan = _fault_plan(faults, problem.delays.seed) if faults is not None else None
            run: KitRun = ContinuousRun(problem, _entries(files), timing, settings, storage, plan)
        else:
            run = KitRun(problem, _entries(files), timing, file_storage_path=storage)
        try:
            wall = _execute(run, progress, record)
        finally:
            if isinstance(run, ContinuousRun):
                run.close()
        written = [write_kit_output(run, output, screen)] if mode == "kit" else []
        written += [record] if record is not None else []
        if results is not None:
            meta = {
                "problem": str(problem.source),
                **{f"{k}_entry": str(v) for k, v in files.items()},
            }
            written += write_lorr_results(results, run, wall, meta)
        if compare and mode == "continuous":
            kit = KitRun(problem, _entries(files), timing, file_storage_path=storage)
            _execute(kit, progress, None)
    except EntryTimeoutError as exc:  # the kit stops the run and exits 124: so do we
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EntryTimeoutError.exit_code) from None
    except FleetSimError as exc:
        raise exit_for(exc) from None
    _summary(run, wall, kit)
    if written:
        typer.echo("wrote " + ", ".join(str(p) for p in written))


def _fault_plan(text: str, seed: int) -> FaultPlan:
    """`--faults`: a faults: section (YAML inline or in a file) as a plan (its own seed, else
    the problem's delay seed)."""
    from pydantic import ValidationError

    from fleetsim.fuzz import faults_of
    from fleetsim.scenario.faults_spec import FaultsSpec, plan_of

    try:
        spec = FaultsSpec.model_validate(faults_of(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(k) for k in first["loc"])
        raise ConfigError(f"--faults: {where}: {first['msg']}") from None
    return plan_of(spec, seed)


def _entries(files: dict[str, Path]) -> Entries:
    """The entries in `files`, loaded (fresh instances) while hosting `MAPF`."""
    with hosting():
        loaded = {kind: load_entry(path, kind) for kind, path in files.items()}
    return Entries(
        loaded["planner"],
        loaded["scheduler"],
        loaded["executor"],
        {kind: str(path) for kind, path in files.items()},
    )


def _execute(run: KitRun, show: bool, record: Path | None) -> float:
    """Run it (recording it to `record`); its wall seconds."""
    recorder = KitRecorder(run, record) if record is not None else None
    began = time.perf_counter()
    try:
        _run(run, show, recorder)
    finally:
        if recorder is not None:
            recorder.close()
    return time.perf_counter() - began


def _run(kit: KitRun, show: bool, recorder: KitRecorder | None) -> None:
    columns = (TextColumn("tick"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not show, transient=True) as bar:
        task = bar.add_task("ticks", total=kit.timing.ticks)
        after = (lambda _run: recorder.frame()) if recorder is not None else None
        kit.run(lambda t: bar.update(task, completed=t), after)


def _summary(run: KitRun, wall: float, kit: KitRun | None = None) -> None:
    row = run_row(run, wall)
    how = "deterministic" if run.timing.deterministic else "wall time"
    name = run.problem.source.name
    title = f"{name}: {run.team} robots, {row['ticks']} ticks ({row['mode']} mode, {how})"
    table = Table(title=title, show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    shown = [
        ("tasks finished", f"{row['tasks_finished']:,}"),
        ("errands done", f"{row['errands_done']:,}"),
        (f"robots stalled (a task, no move in {STALL_TICKS} ticks)", f"{row['robots_stalled']:,}"),
        ("plans adopted", f"{row['plans_adopted']:,} (every {row['plan_period_ticks']} ticks)"),
    ]
    if row["mode"] == "kit":
        shown.append(("action errors (last tick)", f"{row['action_errors_last_tick']:,}"))
    else:
        shown.append(("robot-robot collisions", f"{row['collisions']:,}"))
        shown.append(("faults (fleetsim's)", f"{row['faults']:,}"))
    shown += [
        ("schedule errors", f"{row['schedule_errors']:,}"),
        ("delays", f"{row['delays']:,} ({row['delayed_robot_ticks']:,} robot-ticks)"),
        ("fleetsim loop", f"{row['loop_ms_per_tick']:.2f} ms a tick"),
        ("entries", f"{sum(run.entry_seconds.values()):.2f} s"),
        ("wall time", f"{wall:.2f} s"),
    ]
    if kit is not None:
        shown.append(("kit mode, same input and seeds: tasks finished", f"{kit.finished:,}"))
    for label, value in shown:
        table.add_row(label, value)
    Console().print(table)
