"""What the serving commands (`fleetsim vda5050`, `fleetsim rmf`) share: the `--duration`
option (until stopped by default), taking out of a scenario what would drive its robots besides
the outside fleet manager, and saying so."""

from __future__ import annotations

import typer

from fleetsim.scenario.drivers import DRIVERS, without_drivers

__all__ = ["DRIVERS", "DURATION", "say_turned_off", "without_drivers"]

DURATION = typer.Option(
    None, "--duration", help="Simulated seconds (default: until Ctrl-C or SIGTERM)."
)


def say_turned_off(who: str, removed: list[str]) -> None:
    """Say which of a scenario's drivers (its fleet manager, motion plugins) were turned off for
    serving, and why."""
    if removed:
        typer.echo(
            f"{who} drives the robots: the scenario's {', '.join(sorted(set(removed)))} turned off"
        )
