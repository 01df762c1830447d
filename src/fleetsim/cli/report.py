"""`fleetsim report RUN.mcap`: a recording summed up as one HTML page with plots."""

from __future__ import annotations

from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import ConfigError, FleetSimError


def report(
    source: Path = typer.Argument(
        ..., help="A recording (run --record run.mcap) or results (run --output results.json)."
    ),
    output: Path | None = typer.Option(None, "-o", "--output", help="The page (RUN.html)."),
) -> None:
    """Write an HTML page: tasks, robot states, cycle times, waits, collisions, near misses."""
    from fleetsim.recording.report import write_report

    out = output or source.with_suffix(".html")
    try:
        if out.suffix.lower() not in (".html", ".htm"):
            raise ConfigError(f"--output {out}: use a .html file name")
        notes: list[str] = []
        drawn = write_report(source, out, notes)
    except OSError as exc:
        raise exit_for(ConfigError(f"--output {out}: {exc.strerror or exc}")) from None
    except FleetSimError as exc:
        raise exit_for(exc) from None
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"report: {out} ({len(drawn)} plots: {', '.join(drawn) or 'none'})")
