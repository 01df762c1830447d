"""Recordings: a run as an MCAP file with Foxglove schemas (`record(sim, path)`, `Recorder`,
`fleetsim run --record`), read back as arrays with `open(path)`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetsim.recording.reader import Frame, Recording
from fleetsim.recording.scans import DEFAULT_SCANS, ScanChoice
from fleetsim.recording.writer import Recorder
from fleetsim.version import __version__

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore


def record(
    sim: MultiRobotSimulationCore,
    path: str | Path | None,
    rate: float = 10.0,
    metadata: dict[str, str] | None = None,
    out: Any = None,
    scans: ScanChoice = DEFAULT_SCANS,
) -> Recorder:
    """Record `sim` from now on to an MCAP file that opens in Foxglove.

    Args:
        sim: the simulation to record.
        path: the MCAP file (written by a child process, zstd chunks).
        rate: frames per simulated second.
        metadata: facts for the file's metadata, beside the fleetsim version, the seed and the
            timestep.
        out: where the messages go instead of a file (a live view's
            `fleetsim.recording.live.LiveOut`); `path` is then None.
        scans: whose lidar scans (and safety fields) to take, as Foxglove `LaserScan`s on
            `/scan/<robot>`: a number of robots (the first that carry a lidar; 4 unless told),
            "all" (1,000 robots of 360 beams at 10 Hz are 30 MB a simulated second), or a list
            of robot names.

    Returns:
        The recorder: it records until its `close()`, or until the simulation is closed or
        reset; `pause()` and `resume()` leave out a stretch. Needs `pip install
        "fleetsim[record]"`.
    """
    facts = {
        "fleetsim": __version__,
        "seed": str(sim.params.seed),
        "timestep": str(sim.params.timestep),
        **(metadata or {}),
    }
    return Recorder(sim, path, rate, facts, out=out, scans=scans)


def open(path: str | Path) -> Recording:
    """The recording at `path`, to read frames and events from."""
    return Recording(path)


__all__ = ["Frame", "Recorder", "Recording", "open", "record"]
