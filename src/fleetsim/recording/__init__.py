"""Recordings: a run as an MCAP file with Foxglove schemas (`Recorder`, `sim.record(...)`,
`fleetsim run --record`), read back as arrays with `open(path)`."""

from __future__ import annotations

from pathlib import Path

from fleetsim.recording.reader import Frame, Recording
from fleetsim.recording.writer import Recorder


def open(path: str | Path) -> Recording:
    """The recording at `path`, to read frames and events from."""
    return Recording(path)


__all__ = ["Frame", "Recorder", "Recording", "open"]
