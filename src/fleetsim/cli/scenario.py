"""`fleetsim run`, `validate`, `schema` and `examples`: scenario files from the command line."""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import typer
import yaml
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from fleetsim.errors import (
    AssetError,
    AssetNotFoundError,
    ConfigError,
    FleetSimError,
    closest,
)
from fleetsim.logs import native_stdout_parked
from fleetsim.lorr.examples import EXAMPLES as LORR_EXAMPLES
from fleetsim.lorr.examples import bundled_problems
from fleetsim.models import ModelNotAvailableError
from fleetsim.scenario import build, bundled_scenarios, json_schema, load_scenario
from fleetsim.scenario.body_count import DEFAULT_MAX_BODIES, body_counts
from fleetsim.scenario.results import FORMATS, write_results
from fleetsim.scenario.runner import RunSummary, StopSignal, run_scenario

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2
BAD_INPUT = (ConfigError, AssetError, AssetNotFoundError, ModelNotAvailableError)
FAIL_ON = ("collisions", "robot-collisions", "failed-actions", "stalls")
MAX_REASONS = 10  # failure reasons listed in the summary
MAX_REASON_CHARS = 160
VALIDATE_IN_FULL = 10_000  # bodies validate builds in full; beyond, a sample of each entry
VALIDATE_SAMPLE = 10


def exit_for(exc: Exception) -> typer.Exit:
    """Print the error and return the exit to raise: 2 for bad input, 1 for other failures."""
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(EXIT_BAD_INPUT if isinstance(exc, BAD_INPUT) else EXIT_FAILURE)


def _stop_on(signum: int, frame: object) -> None:
    raise StopSignal(signum)


def handle_stop_signals() -> None:
    """Ctrl-C, SIGTERM and SIGHUP all stop a run cleanly (summary, plugins' on_shutdown).

    SIGINT gets Python's default handler back even when a script started us in the background,
    where the shell hands SIGINT down ignored and Python keeps it that way.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _stop_on)


def _parse_fail_on(value: str | None) -> set[str]:
    chosen = {v.strip() for v in (value or "").split(",") if v.strip()}
    for item in chosen - set(FAIL_ON):
        guess = closest(item, FAIL_ON)
        hint = f"did you mean '{guess}'?" if guess else f"choose from {', '.join(FAIL_ON)}"
        raise exit_for(ConfigError(f"--fail-on: unknown condition '{item}': {hint}"))
    return chosen


def run(
    scenario: str = typer.Argument(
        ..., help="A scenario file, or a bundled name (fleetsim examples)."
    ),
    gui: bool = typer.Option(False, "--gui", help="Open the PyBullet GUI.", metavar=""),
    rtf: float | None = typer.Option(
        None, "--rtf", help="Target real-time factor (0 = as fast as possible)."
    ),
    duration: float | None = typer.Option(None, "--duration", help="Simulated seconds to run."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed."),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a value: key.path=value (repeatable)."
    ),
    max_bodies: int = typer.Option(
        DEFAULT_MAX_BODIES,
        "--max-bodies",
        help="Refuse scenarios with more bodies (or people) than this.",
    ),
    fail_on: str | None = typer.Option(
        None,
        "--fail-on",
        help="Exit 1 if any of these happened (comma-separated): "
        "collisions, robot-collisions (robot-robot only), failed-actions, stalls (a task "
        "that stopped advancing; see the fleet manager's stall_after_s).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Write the run's results: metadata, KPIs, per-robot and per-task tables "
        "(.json, .csv or .parquet).",
    ),
    record: Path | None = typer.Option(
        None, "--record", help="Record the run to an MCAP file for Foxglove (run.mcap)."
    ),
    record_rate: float = typer.Option(
        10.0, "--record-rate", help="Recorded frames per simulated second."
    ),
    record_scans: str = typer.Option(
        "4",
        "--record-scans",
        help="Whose lidar scans to record: a number of robots (the first with a lidar), all, "
        "or robot names, comma-separated.",
    ),
    serve: bool = typer.Option(
        False, "--serve", help="Stream the run live to Foxglove (WebSocket on --serve-port)."
    ),
    serve_port: int = typer.Option(8765, "--serve-port", help="The live view's port."),
    serve_host: str = typer.Option("127.0.0.1", "--serve-host", help="The live view's address."),
) -> None:
    """Run a scenario with a progress bar, then print a summary.

    Exit codes: 0 done; 1 a failure (or a --fail-on condition); 2 bad input; 128 + the signal
    number when stopped by Ctrl-C (130), SIGTERM (143) or SIGHUP (129), after the summary.
    """
    conditions = _parse_fail_on(fail_on)
    if output is not None and output.suffix.lower() not in FORMATS:
        raise exit_for(ConfigError(f"--output {output}: use a .json, .csv or .parquet file name"))
    if output is not None:
        writable_or_exit(output, "--output")  # before the run, not after it
    if record is not None:
        writable_or_exit(record, "--record")
    if record is not None and record.suffix.lower() != ".mcap":
        raise exit_for(ConfigError(f"--record {record}: use a .mcap file name"))
    if not (math.isfinite(record_rate) and record_rate > 0):
        raise exit_for(ConfigError(f"--record-rate {record_rate}: expected frames per second > 0"))
    handle_stop_signals()
    # PyBullet's window threads print to the C stdout at any time: park it for a GUI run.
    with native_stdout_parked() if gui else contextlib.nullcontext():
        summary, meta = _build_and_run(
            scenario,
            overrides,
            gui,
            rtf,
            duration,
            seed,
            max_bodies,
            (record, record_rate, _scans(record_scans)),
            (serve_host, serve_port) if serve else None,
        )
    print_summary(summary)
    if record is not None:
        typer.echo(f"recording: {record} (open it in Foxglove)")
    if output is not None:
        try:
            files = write_results(output, summary, meta)
        except (FleetSimError, OSError) as exc:
            raise exit_for(ConfigError(f"--output {output}: {exc}")) from None
        typer.echo(f"results: {', '.join(str(f) for f in files)}")
    exit_if_stopped(summary)
    broken = _broken_conditions(summary, conditions)
    if broken:
        typer.echo(f"error: --fail-on: {'; '.join(broken)}", err=True)
        raise typer.Exit(EXIT_FAILURE)


def _build_and_run(
    scenario: str,
    overrides: list[str],
    gui: bool,
    rtf: float | None,
    duration: float | None,
    seed: int | None,
    max_bodies: int,
    recording: tuple[Path | None, float, Any] = (None, 10.0, 4),
    live: tuple[str, int] | None = None,
) -> tuple[RunSummary, dict[str, Any]]:
    console = Console(stderr=True)
    started = time.perf_counter()
    try:
        loaded = load_scenario(scenario, overrides)
        built = build(
            loaded,
            max_bodies=max_bodies,
            gui=gui or None,
            target_rtf=rtf,
            duration=duration,
            seed=seed,
        )
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt as exc:  # stopped while building: nothing to summarise
        raise typer.Exit(128 + getattr(exc, "signum", signal.SIGINT)) from None
    build_time = time.perf_counter() - started
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
    )
    # (redrawn as often as the run reports progress, `PROGRESS_EVERY_S`: more is the same bar)
    with built.sim, Progress(*columns, console=console, refresh_per_second=5) as bar:
        task = bar.add_task(loaded.path.stem, total=built.sim.params.duration, status="starting")
        record_to, rate, scans = recording
        server = None
        try:
            if record_to is not None:
                start_recording(built, loaded, overrides, record_to, rate, scans)
            if live is not None:
                server = start_live_view(built, *live, rate)
                console.print(f"live view: {server.url} (Foxglove: Open connection)")
        except FleetSimError as exc:
            raise exit_for(exc) from None

        def progress(sim_time: float, factor: float) -> None:
            bar.update(task, completed=sim_time, status=f"t={sim_time:.1f} s  RTF {factor:.1f}x")

        try:
            summary = run_scenario(built, progress=progress, build_time=build_time)
        except FleetSimError as exc:
            raise exit_for(exc) from None
        finally:
            if server is not None:
                server.stop()
        status = (
            f"stopped by {_signal_label(summary.stopped_by)}" if summary.interrupted else "done"
        )
        bar.update(task, completed=summary.sim_time, status=status)
    meta = {
        "scenario": loaded.scenario.name,
        "scenario_file": str(loaded.path),
        "seed": built.sim.params.seed,
        "overrides": list(overrides),
    }
    return summary, meta


def _scans(text: str) -> int | str | list[str]:
    """--record-scans: a number, "all", or names (comma-separated)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    return "all" if text == "all" else [name.strip() for name in text.split(",") if name.strip()]


def start_recording(
    built: Any, loaded: Any, overrides: list[str], path: Path, rate: float, scans: Any = 4
) -> None:
    """Record the built run to `path` (closed with the simulation), with the scenario, its
    overrides and the fleet manager's KPI series."""
    facts = {
        "scenario": loaded.scenario.name or loaded.path.stem,
        "scenario_file": str(loaded.path),
        "overrides": json.dumps(list(overrides)),
    }
    from fleetsim.recording import record  # (60 ms to import: only for runs that record)

    watch_fleet_of(built, record(built.sim, path, rate, facts, scans=scans))


def start_live_view(built: Any, host: str, port: int, rate: float) -> Any:
    """A Foxglove WebSocket server streaming the run (the recording's topics) until it ends."""
    from fleetsim.recording import record
    from fleetsim.recording.live import FoxgloveServer, LiveOut

    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: the live view on {host}: anyone who reaches it can watch", err=True)
    server = FoxgloveServer(host, port, start=False)
    recorder = record(built.sim, None, rate, out=LiveOut(server))  # (closed with the sim)
    watch_fleet_of(built, recorder)
    recorder.make_channels()
    server.start()  # (once the recorder has made the run's channels: a viewer gets them all)
    return server


def watch_fleet_of(built: Any, recorder: Any) -> None:
    """Let `recorder` take states, tasks and KPIs from the scenario's fleet manager (the
    `fleet_manager` plugin's), if it has one."""
    for plugin in built.plugins:
        manager = getattr(plugin, "manager", None)
        if isinstance(getattr(manager, "series", None), list):
            recorder.watch_fleet(manager)
            return


def writable_or_exit(path: Path, option: str) -> None:
    """Exit 2 now if `path` cannot be written (its folder made, a file created there)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".fleetsim-", delete=True):
            pass
    except OSError as exc:
        raise exit_for(
            ConfigError(f"{option} {path}: cannot write there ({exc.strerror or exc})")
        ) from None


def _broken_conditions(summary: RunSummary, conditions: set[str]) -> list[str]:
    broken = []
    if "collisions" in conditions and summary.collisions:
        broken.append(f"{summary.collisions} collisions")
    robot_robot = summary.collisions_by_kind.get("robot-robot", 0)
    if "robot-collisions" in conditions and robot_robot:
        broken.append(f"{robot_robot} robot-robot collisions")
    stalls = summary.kpis.get("stalls", 0)
    if "stalls" in conditions and stalls:
        broken.append(f"{stalls} stalls ({summary.kpis.get('stalled_now', 0)} still stalled)")
    if "failed-actions" in conditions and summary.actions_failed:
        broken.append(f"{summary.actions_failed} failed actions")
    return broken


def _fault_rows(k: dict[str, Any]) -> list[tuple[str, str]]:
    """The faults injected (a scenario's `faults:` section), by kind."""
    faults = k.get("faults")
    if not isinstance(faults, dict):
        return []
    kinds = ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in faults.items() if n)
    return [
        (
            "faults",
            f"{sum(faults.values())} ({kinds or 'none happened'}; "
            f"{k.get('faults_active', 0)} still on at the end)",
        )
    ]


def _people_rows(k: dict[str, Any]) -> list[tuple[str, str]]:
    """The people (a scenario's `people:` section): how many, contacts, the closest gap."""
    if "people_added" not in k:
        return []
    gap = k["closest_person_gap_m"]
    return [
        (
            "people",
            f"{k['people_added']} came, {k['people_arrived']} left, {k['people_now']} still on "
            f"the floor; {k['person_contacts']} robot-person contacts; closest gap "
            + (f"{gap:.2f} m" if gap is not None else "none within 2 m")
            + f"; robots waited {k['robot_wait_for_people_s']:.0f} s for people (slowed "
            f"{k['robot_slowed_for_people_s']:.0f} s), people {k['people_wait_for_robots_s']:.0f}"
            " s for robots",
        )
    ]


def _behavior_rows(k: dict[str, Any]) -> list[tuple[str, str]]:
    """The behaviour trees (`behavior:` of robots or people groups): how they ended."""
    if "trees" not in k:
        return []
    text = (f"{k['trees']} ({k['trees_running']} still running, {k['trees_succeeded']} "
            f"succeeded, {k['trees_failed']} failed); {k['tree_ticks']} ticks")  # fmt: skip
    if k["leaf_failures"]:
        text += f"; last failure: {k['leaf_failures'][-1]}"
    return [("behaviour trees", text)]


def _kpi_rows(k: dict[str, Any]) -> list[tuple[str, str]]:
    """The fleet's headline numbers, when a fleet manager ran."""
    if "tasks_completed" not in k:
        return []
    cycle, queue = k["cycle_time_s"], k["queue_time_s"]
    cycles = (
        f"p50 {cycle['p50']:.1f} s, p95 {cycle['p95']:.1f} s, max {cycle['max']:.1f} s "
        f"(queued p50 {queue['p50']:.1f} s)"
        if cycle["p50"] is not None
        else "none done"
    )
    unresolved = k["deadlocks_unresolved"]
    doors = (
        [
            (
                "doors",
                f"{k['door_cycles']} openings, open {k['door_open_s']:.0f} s in all; robots "
                f"waited {k['door_waits']} times ({k['door_wait_s']:.0f} s)",
            )
        ]
        if k.get("doors")
        else []
    )
    lifts = k.get("lifts") or {}
    if lifts:
        use = ", ".join(
            f"{name} {v['trips']} trips, {v['utilisation'] * 100:.0f}% in use, "
            f"waits {v['wait_s_mean']:.0f} s"
            for name, v in lifts.items()
        )
        doors.append(("lifts", f"{k['lift_rides']} robot rides ({use})"))
    return [
        *doors,
        (
            "tasks",
            f"{k['tasks_completed']} done, {k['tasks_failed']} failed, "
            f"{k['tasks_released']} released (fleet manager orders)",
        ),
        ("throughput", f"{k['throughput_per_hour']:.1f} tasks/hour"),
        ("cycle time", cycles),
        (
            "utilisation",
            f"{k['utilisation'] * 100:.0f}% (waiting {k['waiting_time_s']:.0f} "
            f"robot-s, {k['distance_m']:.0f} m driven)",
        ),
        ("conflicts", f"{k['conflicts']} (a robot stopped for another's node)"),
        ("deadlocks", f"{k['deadlocks']} ({unresolved} unresolved)"),
        ("stalls", f"{k['stalls']} ({k['stalled_now']} still stalled)"),
        *_safety_row(k.get("safety_fields")),
        (
            "near misses",
            ", ".join(f"{kind} {n}" for kind, n in k["near_misses"].items())
            + f" (within {k['near_miss_gap_m']:.2f} m)",
        ),
    ]


def _safety_row(totals: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The safety fields' row, when a robot has fields that stopped or slowed it."""
    if not totals or not (totals["protective_stops"] or totals["slowed_s"]):
        return []
    return [
        (
            "safety fields",
            f"{totals['protective_stops']} protective stops ({totals['stopped_s']:.0f} robot-s "
            f"stopped, {totals['slowed_s']:.0f} robot-s slowed)",
        )
    ]


def print_summary(summary: RunSummary) -> None:
    """Print a run's summary table."""
    table = Table(title="fleetsim run summary", show_header=False)
    table.add_column("what", min_width=len("actions completed"))  # (the same width, always)
    table.add_column("value")
    kinds = ", ".join(f"{k} {n}" for k, n in summary.collisions_by_kind.items())
    rows = [
        ("simulated time", f"{summary.sim_time:.2f} s ({summary.steps} steps)"),
        ("wall time", f"{summary.wall_time:.2f} s (building {summary.build_time:.2f} s)"),
        ("real-time factor", f"{summary.real_time_factor:.1f}x"),
        ("robots", str(summary.robots)),
    ]
    if summary.actions_completed or summary.actions_failed or "tasks_completed" not in summary.kpis:
        rows += [
            (
                "actions completed",
                f"{summary.actions_completed} (robot actions: go_to, pick, wait, ...)",
            ),
            ("actions failed", str(summary.actions_failed)),
        ]
    else:  # (a fleet manager drives its robots itself: its tasks are the numbers below)
        rows.append(("actions", "none queued (the fleet manager drives the robots)"))
    rows.append(("collisions", f"{summary.collisions}" + (f" ({kinds})" if kinds else "")))
    rows += _kpi_rows(summary.kpis)
    rows += _fault_rows(summary.kpis) + _people_rows(summary.kpis) + _behavior_rows(summary.kpis)
    if summary.interrupted:
        rows.append(("stopped", f"by {_signal_label(summary.stopped_by)}"))
    for name, value in rows:
        table.add_row(name, value)
    console = Console()
    console.print(table)
    reasons = list(summary.failure_reasons.items())
    if reasons:
        console.print("failed actions by reason:", markup=False, highlight=False)
    for reason, count in reasons[:MAX_REASONS]:
        robots = summary.failure_robots.get(reason, [])
        who = f" ({', '.join(robots)}{', ...' if count > len(robots) else ''})" if robots else ""
        line = f"  {count} x {_clip(reason, MAX_REASON_CHARS)}{who}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if len(reasons) > MAX_REASONS:
        rest = sum(n for _, n in reasons[MAX_REASONS:])
        console.print(f"  {rest} more, for {len(reasons) - MAX_REASONS} other reasons")


def _signal_label(name: str | None) -> str:
    return "Ctrl-C" if name == "SIGINT" else str(name)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def validate(
    scenario: str = typer.Argument(..., help="A scenario file or bundled name."),
    max_bodies: int = typer.Option(
        DEFAULT_MAX_BODIES,
        "--max-bodies",
        help="Refuse scenarios with more bodies (or people) than this.",
    ),
) -> None:
    """Check a scenario completely (format, models, meshes, plugins, actions) without running it.

    Fleets of up to 10,000 bodies are built in full; larger ones are checked on a sample of each
    robot and object entry, so a huge fleet validates in seconds.
    """
    try:
        loaded = load_scenario(scenario)
        total = sum(n for _, n in body_counts(loaded))
        sample = None if total <= VALIDATE_IN_FULL else VALIDATE_SAMPLE
        with build(loaded, max_bodies=max_bodies, sample=sample, gui=False).sim:
            pass
    except FleetSimError as exc:
        raise exit_for(exc) from None
    how = "" if sample is None else f"; checked on up to {sample} bodies of each entry"
    typer.echo(
        f"ok: {loaded.path} ({len(loaded.scenario.robots)} robot entries, {total:,} bodies{how})"
    )


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
    problems = Table(
        title="bundled LoRR problems (fleetsim lorr run NAME; fleetsim examples copy NAME)"
    )
    problems.add_column("name", no_wrap=True)
    problems.add_column("description")
    for name, description in LORR_EXAMPLES.items():
        problems.add_row(name, description)
    Console().print(problems)


@examples_app.command("copy")
def copy(
    names: list[str] = typer.Argument(None, help="Scenarios to copy (default: all)."),
    to: Path = typer.Option(Path("."), "--to", help="Folder to copy into."),
) -> None:
    """Copy bundled scenarios into a folder, to edit and run them."""
    bundled = bundled_scenarios()
    problems = bundled_problems()
    chosen = names or list(bundled)
    unknown = [n for n in chosen if n not in bundled and n not in problems]
    if unknown:
        known = ", ".join([*bundled, *problems])
        raise exit_for(AssetNotFoundError(f"no bundled scenario {unknown}; choose from {known}"))
    to.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        if name in problems:  # a LoRR problem: its folder (input JSON, map, agents, tasks)
            shutil.copytree(problems[name].parent, to / name, dirs_exist_ok=True)
            typer.echo(f"copied {name} -> {to / name}")
            continue
        target = to / bundled[name].name
        shutil.copyfile(bundled[name], target)
        typer.echo(f"copied {name} -> {target}")
        site = (yaml.safe_load(bundled[name].read_text()) or {}).get("site") or {}
        named = site.get("file") if isinstance(site, dict) else None
        beside = bundled[name].parent / str(named)
        if named and beside.is_file():
            shutil.copyfile(beside, to / beside.name)  # the site file it names, beside it
            typer.echo(f"copied {beside.name} -> {to / beside.name}")


def exit_if_stopped(summary: RunSummary) -> None:
    """Exit 128 + the signal's number when a signal stopped the run (after the summary)."""
    if summary.stopped_by is not None:
        raise typer.Exit(128 + signal.Signals[summary.stopped_by].value)
