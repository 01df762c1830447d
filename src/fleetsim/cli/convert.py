"""`fleetsim import pybullet-fleet CONFIG -o scenario.yaml`: other tools' files as scenarios."""

from __future__ import annotations

from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import FleetSimError
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.importer import convert_pybullet_fleet

app = typer.Typer(help="Convert other simulators' files into fleetsim scenarios.")


@app.command("pybullet-fleet")
def pybullet_fleet(
    config: Path = typer.Argument(..., help="A PyBulletFleet config file (YAML)."),
    output: Path = typer.Option(..., "--output", "-o", help="The scenario file to write."),
) -> None:
    """Convert a PyBulletFleet config (simulation, managers, entities) into a scenario file,
    check that it builds, and list what could not be carried over."""
    try:
        converted = convert_pybullet_fleet(config)
        output.write_text(converted.to_yaml(config.name))
        loaded = load_scenario(output)
        with build(loaded, gui=False, sample=10).sim:
            pass
    except FleetSimError as exc:
        raise exit_for(exc) from None
    robots = len(loaded.scenario.robots)
    typer.echo(
        f"wrote {output} ({robots} robot entries); check it with: fleetsim validate {output}"
    )
    if converted.notes:
        typer.echo("not carried over (or changed):", err=True)
        for note in converted.notes:
            typer.echo(f"  - {note}", err=True)
