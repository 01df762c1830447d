"""`fleetsim replay RUN.mcap`: a recording played back in the PyBullet window (or headless)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.logs import native_stdout_parked


def replay(
    recording: Path = typer.Argument(..., help="A recording (fleetsim run ... --record)."),
    speed: float = typer.Option(1.0, "--speed", help="Times the recorded pace (0: at once)."),
    start: float = typer.Option(0.0, "--start", help="Simulated second to start from."),
    until: float | None = typer.Option(None, "--until", help="Simulated second to stop at."),
    headless: bool = typer.Option(False, "--headless", help="No window (checks a recording)."),
) -> None:
    """Play a recording back: SPACE pauses, + and - change the speed, the arrows seek 10 s."""
    from fleetsim import MultiRobotSimulationCore, SimulationParams
    from fleetsim.recording import open as open_recording
    from fleetsim.recording.replay import Replay

    try:
        if not speed >= 0:
            raise ConfigError(f"--speed {speed}: expected 0 (at once) or more")
        with open_recording(recording) as rec:
            end = rec.end_time
            if start > end:
                raise ConfigError(f"--start {start}: the recording ends at {end:.1f} s")
            gui = not headless
            with native_stdout_parked() if gui else contextlib.nullcontext(), \
                    MultiRobotSimulationCore(SimulationParams(gui=gui)) as sim:  # fmt: skip
                played = Replay(rec, sim).play(speed=speed, start=start, until=until)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    typer.echo(f"replayed {played.frames} frames, {played.start:.1f} to {played.end:.1f} s "
               f"of {recording}")  # fmt: skip
