"""`fleetsim rmf SCENARIO`: a scenario's robots behind Open-RMF's fleet-manager API (the
`rmf_demos_fm` endpoints), served over HTTP until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import typer
import yaml

from fleetsim import environment
from fleetsim.cli.scenario import exit_for, exit_if_stopped, handle_stop_signals, print_summary
from fleetsim.cli.serving import DURATION, say_turned_off, without_drivers
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.faults_spec import network_faults_of
from fleetsim.scenario.runner import run_scenario


def rmf(
    scenario: str = typer.Argument(..., help="A scenario file, or a bundled name."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to serve on."),
    port: int = typer.Option(22011, "--port", help="Port (0: a free one)."),
    rtf: float = typer.Option(1.0, "--rtf", help="Target real-time factor."),
    map_name: str | None = typer.Option(
        None, "--map-name", help="The robots' map_name (default: the building level, or L1)."
    ),
    duration: float | None = DURATION,
    token: str | None = typer.Option(
        None,
        "--token",
        envvar=environment.RMF_TOKEN.name,
        help="Require 'Authorization: Bearer TOKEN' (off by default: RMF's demo sends none).",
    ),
    activities: Path | None = typer.Option(
        None,
        "--activities",
        help="YAML {activity: {label: [[x, y, yaw], ...]}}, added to the "
        "scenario's rmf.activities.",
    ),
    overrides: list[str] = typer.Option([], "--set", help="key.path=value (repeatable)."),
    doors: str = typer.Option(
        "open",
        "--doors",
        help="'open': the building's doors are held open (RMF's fleet adapter does not open "
        "them here); 'requests': they move only on door_request (a door adapter, a script).",
    ),
) -> None:
    """Serve the scenario's robots to an RMF fleet adapter; prints the API's address."""
    if doors not in ("open", "requests"):
        typer.echo(f"error: --doors {doors!r}: use 'open' or 'requests'", err=True)
        raise typer.Exit(2)
    from fleetsim.interfaces.rmf.fleet import RmfFleet, check_activities
    from fleetsim.interfaces.rmf.server import RmfServer, make_app
    from fleetsim.scenario.schema import RmfSpec

    handle_stop_signals()
    try:
        loaded = load_scenario(scenario, overrides)
        spec = loaded.scenario.rmf or RmfSpec()
        routes: Any = {
            k: {a: [list(p) for p in path] for a, path in labels.items()}
            for k, labels in spec.activities.items()
        }
        if activities is not None:
            routes = {**routes, **check_activities(read_activities(activities))}
        turned_off = without_drivers(loaded.scenario)
        built = build(loaded, target_rtf=rtf)
        if duration is None:
            built.sim.params.duration = None  # until stopped
        if host not in ("127.0.0.1", "localhost", "::1"):
            typer.echo(
                f"warning: serving on {host}: anyone who reaches it can drive the robots", err=True
            )
        with built.sim:
            site = built.sim.site
            if doors == "open" and built.sim.doors is not None:
                for name in built.sim.doors.doors:
                    built.sim.doors.open(name, "fleetsim rmf --doors open")
            level = map_name or spec.map_name or (site.level if site is not None else None)
            fleet = RmfFleet(
                built.sim,
                built.scene.robots,
                map_name=level or "L1",
                activities=routes,
                blocked_after_s=spec.blocked_after_s,
            )
            fleet.start()
            faults = network_faults_of(loaded.scenario.faults, built.sim.params.seed or 0, "rmf")
            with RmfServer(make_app(fleet, token, faults), host, port) as server:
                typer.echo(
                    f"fleet manager {server.url}/  robots {len(fleet.robots)}  map {fleet.map_name}"
                )
                say_turned_off("RMF", turned_off)
                try:
                    summary = run_scenario(built, duration=duration)
                finally:
                    fleet.stop_serving()
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt as exc:  # stopped before the run began
        raise typer.Exit(128 + getattr(exc, "signum", signal.SIGINT)) from None
    print_summary(summary)
    exit_if_stopped(summary)


def read_activities(path: Path) -> Any:
    """The activities in a YAML file ({activity: {label: [[x, y, yaw], ...]}}), checked."""
    try:
        return yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"--activities {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--activities {path}: not YAML ({exc})") from None
