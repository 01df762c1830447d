"""`fleetsim vda5050 SCENARIO`: every robot of a scenario a VDA 5050 vehicle on an MQTT broker
(an embedded one on 127.0.0.1 unless `--broker` names one), until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
from datetime import datetime, timezone

import typer

from fleetsim import environment
from fleetsim.cli.scenario import exit_for, exit_if_stopped, handle_stop_signals, print_summary
from fleetsim.cli.serving import DURATION, say_turned_off, without_drivers
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.faults_spec import network_faults_of
from fleetsim.scenario.runner import run_scenario


def vda5050(
    scenario: str = typer.Argument(..., help="A scenario file, or a bundled name."),
    broker: str | None = typer.Option(
        None, "--broker", help="mqtt://HOST:PORT of a broker (default: an embedded one)."
    ),
    version: str = typer.Option("2.0", "--version", help="VDA 5050 version: 2.0 or 2.1."),
    manufacturer: str = typer.Option("fleetsim", "--manufacturer"),
    interface: str = typer.Option("uagv", "--interface"),
    rtf: float = typer.Option(1.0, "--rtf", help="Target real-time factor."),
    state_interval: float = typer.Option(
        1.0, "--state-interval", help="Simulated seconds between states at most."
    ),
    connection_mode: str = typer.Option(
        "per-vehicle", "--connection-mode", help="per-vehicle (the standard's) or shared."
    ),
    visualization_rate: float = typer.Option(
        0.0, "--visualization-rate", help="Hz of visualization messages (0 = none)."
    ),
    duration: float | None = DURATION,
    username: str | None = typer.Option(None, "--username", help="The broker's user name."),
    password: str | None = typer.Option(
        None,
        "--password",
        envvar=environment.MQTT_PASSWORD.name,
        help="The broker's password (or set FLEETSIM_MQTT_PASSWORD).",
    ),
    tls_ca: str | None = typer.Option(
        None, "--tls-ca", help="A CA certificate file: connect with TLS (as mqtts:// does)."
    ),
    map_id: str = typer.Option(
        "site", "--map-id", help="The vehicles' mapId (order nodes on another map are refused)."
    ),
    start_time: str | None = typer.Option(
        None,
        "--start-time",
        help="Timestamps: the UTC time of simulated t=0, ISO 8601 such as 2026-01-01T08:00:00Z "
        "(default: when the run starts), for reproducible runs.",
    ),
    overrides: list[str] = typer.Option([], "--set", help="key.path=value (repeatable)."),
) -> None:
    """Serve the scenario's robots as VDA 5050 vehicles; prints the broker and topic prefix."""
    from fleetsim.interfaces.vda5050.broker import EmbeddedBroker
    from fleetsim.interfaces.vda5050.fleet import VdaFleet
    from fleetsim.interfaces.vda5050.topics import Topics

    handle_stop_signals()
    embedded = None
    try:
        epoch = None if start_time is None else unix_time(start_time)
        topics = Topics(interface, version, manufacturer)
        loaded = load_scenario(scenario, overrides)
        turned_off = without_drivers(loaded.scenario)
        built = build(loaded, target_rtf=rtf)
        if duration is None:
            built.sim.params.duration = None  # until stopped
        if broker is None:
            embedded = EmbeddedBroker().start()
            broker = embedded.url
        with built.sim:
            fleet = VdaFleet(
                built.sim,
                built.scene.robots,
                broker,
                topics,
                state_interval,
                mode=connection_mode,
                visualization_rate=visualization_rate,
                network=network_faults_of(loaded.scenario.faults, built.sim.params.seed or 0),
                username=username,
                password=password,
                tls_ca=tls_ca,
                map_id=map_id,
                epoch=epoch,
            )
            fleet.start()
            typer.echo(
                f"broker {broker}  topics {topics.prefix}/<serialNumber>/...  "
                f"vehicles {len(fleet.vehicles)}"
            )
            say_turned_off("the master control", turned_off)
            try:
                summary = run_scenario(built, duration=duration)
            finally:
                fleet.stop()
            counts = fleet.link.counts
            typer.echo(
                f"VDA 5050: {counts['order']} orders and {counts['instantActions']} "
                f"instant-action messages received, {counts['state']} states "
                "published"
            )
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt as exc:  # stopped before the run began
        raise typer.Exit(128 + getattr(exc, "signum", signal.SIGINT)) from None
    finally:
        if embedded is not None:
            embedded.stop()
    print_summary(summary)
    exit_if_stopped(summary)


def unix_time(text: str) -> float:
    """Seconds since 1970 of an ISO 8601 time (UTC unless it says otherwise)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"--start-time {text!r}: expected an ISO 8601 time such as 2026-01-01T08:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
