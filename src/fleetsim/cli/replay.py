"""`fleetsim replay RUN.mcap`: a recording played back in the PyBullet window (or headless)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import typer

from fleetsim.cli.scenario import exit_for, handle_stop_signals
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.logs import native_stdout_parked


def replay(
    recording: Path = typer.Argument(..., help="A recording (fleetsim run ... --record)."),
    speed: float = typer.Option(1.0, "--speed", help="Times the recorded pace (0: at once)."),
    start: float = typer.Option(0.0, "--start", help="Simulated second to start from."),
    until: float | None = typer.Option(None, "--until", help="Simulated second to stop at."),
    headless: bool = typer.Option(False, "--headless", help="No window (checks a recording)."),
    serve: bool = typer.Option(False, "--serve", help="Stream it to Foxglove instead (WebSocket)."),
    port: int = typer.Option(8765, "--port", help="The WebSocket port for --serve."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address for --serve."),
) -> None:
    """Play a recording back: SPACE pauses, + and - change the speed, the arrows seek 10 s."""
    from fleetsim import MultiRobotSimulationCore, SimulationParams
    from fleetsim.recording import open as open_recording
    from fleetsim.recording.replay import Replay

    handle_stop_signals()  # (Ctrl-C stops it even when started with SIGINT ignored)

    try:
        if not speed >= 0:
            raise ConfigError(f"--speed {speed}: expected 0 (at once) or more")
        with open_recording(recording) as rec:
            said = rec.truncated
            if said is not None:
                typer.echo(f"note: {said}", err=True)
            end = rec.end_time
            if start > end:
                raise ConfigError(f"--start {start}: the recording ends at {end:.1f} s")
            if serve:
                sent = serve_recording(rec, host, port, speed, start, until)
                typer.echo(f"streamed {sent} messages of {recording}")
                return
            gui = not headless
            with (
                native_stdout_parked() if gui else contextlib.nullcontext(),
                MultiRobotSimulationCore(SimulationParams(gui=gui)) as sim,
            ):
                played = Replay(rec, sim).play(speed=speed, start=start, until=until)
            if rec.truncated is not None and rec.truncated != said:  # (damage met on the way)
                typer.echo(f"note: {rec.truncated}", err=True)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    typer.echo(
        f"replayed {played.frames} frames, {played.start:.1f} to {played.end:.1f} s of {recording}"
    )


WAIT_S = 600.0  # --serve: how long to wait for a client before streaming anyway


def serve_recording(
    rec: Any, host: str, port: int, speed: float, start: float, until: float | None
) -> int:
    """Stream a recording to Foxglove over WebSocket until Ctrl-C or its end."""
    from fleetsim.recording.live import FoxgloveServer, offer_channels, stream_recording

    server = FoxgloveServer(host, port, start=False)
    try:
        offer_channels(rec, server)  # (before it takes connections: a viewer gets them all)
        server.start()
        typer.echo(
            f"live view: {server.url} (Foxglove: Open connection; streams once a "
            f"client subscribes)",
            err=True,
        )
        return stream_recording(rec, server, speed=speed, start=start, until=until, wait_s=WAIT_S)
    finally:
        server.stop()
