"""`fleetsim report RUN.mcap`: a recording summed up as one HTML page with plots."""

from __future__ import annotations

from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import ConfigError, FleetSimError


def report(
    recording: Path = typer.Argument(..., help="A recording (fleetsim run ... --record)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="The page (RUN.html)."),
) -> None:
    """Write an HTML page: tasks, robot states, task durations, waits and collisions."""
    from fleetsim.recording import open as open_recording
    from fleetsim.recording.report import write_report

    out = output or recording.with_suffix(".html")
    try:
        if out.suffix.lower() not in (".html", ".htm"):
            raise ConfigError(f"--output {out}: use a .html file name")
        with open_recording(recording) as rec:
            drawn = write_report(rec, out)
    except OSError as exc:
        raise exit_for(ConfigError(f"--output {out}: {exc.strerror or exc}")) from None
    except FleetSimError as exc:
        raise exit_for(exc) from None
    typer.echo(f"report: {out} ({len(drawn)} plots: {', '.join(drawn) or 'none'})")
