"""What the serving commands (`fleetsim vda5050`, `fleetsim rmf`) share: the `--duration`
option (until stopped by default), taking out of a scenario what would drive its robots besides
the outside fleet manager, and saying so."""

from __future__ import annotations

import typer

from fleetsim.scenario.schema import Scenario

DRIVERS = ("fleet_manager", "patrol", "random_goals", "shuttle")  # plugins that move robots
DURATION = typer.Option(
    None, "--duration", help="Simulated seconds (default: until Ctrl-C or SIGTERM)."
)


def without_drivers(scenario: Scenario) -> list[str]:
    """Take out of `scenario` what would drive its robots besides the master control (the
    fleet manager, motion plugins, start actions); returns what was taken out."""
    removed = [p.type or "" for p in scenario.plugins if p.type in DRIVERS]
    scenario.plugins = [p for p in scenario.plugins if p.type not in DRIVERS]
    for robot in scenario.robots:
        removed += [p.type or "" for p in robot.plugins if p.type in DRIVERS]
        robot.plugins = [p for p in robot.plugins if p.type not in DRIVERS]
        if robot.actions:
            removed.append("start actions")
            robot.actions = []
    return removed


def say_turned_off(who: str, removed: list[str]) -> None:
    """Say which of a scenario's drivers (its fleet manager, motion plugins) were turned off for
    serving, and why."""
    if removed:
        typer.echo(f"{who} drives the robots: the scenario's "
                   f"{', '.join(sorted(set(removed)))} turned off")  # fmt: skip
