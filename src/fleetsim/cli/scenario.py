"""`fleetsim run`, `validate`, `schema` and `examples`: scenario files from the command line."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import typer
import yaml
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from fleetsim.errors import AssetNotFoundError, ConfigError, FleetSimError
from fleetsim.models import ModelNotAvailableError
from fleetsim.scenario import build, bundled_scenarios, json_schema, load_scenario
from fleetsim.scenario.runner import RunSummary, run_scenario

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2
BAD_INPUT = (ConfigError, AssetNotFoundError, ModelNotAvailableError)


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(EXIT_BAD_INPUT if isinstance(exc, BAD_INPUT) else EXIT_FAILURE)


def run(
    scenario: str = typer.Argument(
        ..., help="A scenario file, or a bundled name (fleetsim examples)."
    ),
    gui: bool = typer.Option(False, "--gui", help="Open the PyBullet GUI."),
    rtf: float | None = typer.Option(
        None, "--rtf", help="Target real-time factor (0 = as fast as possible)."
    ),
    duration: float | None = typer.Option(None, "--duration", help="Simulated seconds to run."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed."),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a value: key.path=value (repeatable)."
    ),
) -> None:
    """Run a scenario with a progress bar, then print a summary."""
    console = Console(stderr=True)
    # Ctrl-C (SIGINT) stops the run with a summary even when a script started us in the
    # background, where the shell hands SIGINT down ignored and Python keeps it that way.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        loaded = load_scenario(scenario, overrides)
        built = build(loaded, gui=gui or None, target_rtf=rtf, duration=duration, seed=seed)
    except FleetSimError as exc:
        raise _fail(exc) from None
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
    )
    with built.sim, Progress(*columns, console=console) as bar:
        task = bar.add_task(loaded.path.stem, total=built.sim.params.duration, status="starting")

        def progress(sim_time: float, factor: float) -> None:
            bar.update(task, completed=sim_time, status=f"t={sim_time:.1f} s  RTF {factor:.1f}x")

        try:
            summary = run_scenario(built, progress=progress)
        except FleetSimError as exc:
            raise _fail(exc) from None
        status = "stopped (Ctrl-C)" if summary.interrupted else "done"
        bar.update(task, completed=summary.sim_time, status=status)
    _print_summary(summary)


def _print_summary(summary: RunSummary) -> None:
    table = Table(title="fleetsim run summary", show_header=False)
    rows = [
        ("simulated time", f"{summary.sim_time:.2f} s ({summary.steps} steps)"),
        ("wall time", f"{summary.wall_time:.2f} s"),
        ("real-time factor", f"{summary.real_time_factor:.1f}x"),
        ("robots", str(summary.robots)),
        ("actions completed", str(summary.actions_completed)),
        ("actions failed", str(summary.actions_failed)),
        ("collisions", str(summary.collisions)),
    ]
    if summary.interrupted:
        rows.append(("stopped", "by Ctrl-C"))
    for name, value in rows:
        table.add_row(name, value)
    Console().print(table)


def validate(scenario: str = typer.Argument(..., help="A scenario file or bundled name.")) -> None:
    """Check a scenario completely (format, models, plugins, files) without running it."""
    try:
        loaded = load_scenario(scenario)
        with build(loaded, gui=False).sim as sim:
            counts = f"{len(loaded.scenario.robots)} robot entries, {len(sim.sim_objects)} bodies"
    except FleetSimError as exc:
        raise _fail(exc) from None
    typer.echo(f"ok: {loaded.path} ({counts})")


def schema() -> None:
    """Print the JSON Schema of scenario files (for editor completion)."""
    typer.echo(json.dumps(json_schema(), indent=2))


examples_app = typer.Typer(help="The scenarios bundled with fleetsim.", invoke_without_command=True)


@examples_app.callback()
def examples(ctx: typer.Context) -> None:
    """List the bundled scenarios (run one with: fleetsim run NAME)."""
    if ctx.invoked_subcommand is not None:
        return
    table = Table(title="bundled scenarios (fleetsim run NAME; fleetsim examples copy NAME)")
    table.add_column("name", no_wrap=True)
    table.add_column("description")
    for name, path in bundled_scenarios().items():
        description = (yaml.safe_load(path.read_text()) or {}).get("description", "")
        table.add_row(name, description)
    Console().print(table)


@examples_app.command("copy")
def copy(
    names: list[str] = typer.Argument(None, help="Scenarios to copy (default: all)."),
    to: Path = typer.Option(Path("."), "--to", help="Folder to copy into."),
) -> None:
    """Copy bundled scenarios into a folder, to edit and run them."""
    bundled = bundled_scenarios()
    chosen = names or list(bundled)
    unknown = [n for n in chosen if n not in bundled]
    if unknown:
        raise _fail(
            AssetNotFoundError(f"no bundled scenario {unknown}; choose from {', '.join(bundled)}")
        )
    to.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        target = to / bundled[name].name
        shutil.copyfile(bundled[name], target)
        typer.echo(f"copied {name} -> {target}")
