"""`McapOut`: an MCAP file written by a process of its own.

The simulation hands over finished message bytes (and, for collisions, the pairs' keys)
through a pipe, and the fleet's poses through shared memory (`PoseSlots`), and goes on. A
child process (`mcap_process.py`, which imports nothing of fleetsim, so it starts in a tenth of
a second) owns the `mcap` writer: it registers channels as topics first appear, adds messages,
compresses chunks with zstd and writes them, on the other core and under its own GIL. A full
pipe (or no free slot) makes the simulation wait instead of filling memory. If the child fails
(a full disk), the next message or `close()` raises a `FleetSimError` with its reason.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import numpy as np

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.recording.slots import PoseSlots

CLOSE_TIMEOUT_S = 120.0
PIPE_BYTES = 1 << 20
FLUSH_FRAMES = 4  # frames handed to the child at a time (of `slots.SLOTS`)
CHILD = Path(__file__).with_name("mcap_process.py")


def widen(pipe: IO[bytes]) -> None:
    """A 1 MB pipe (Linux; 64 kB by default), so a frame goes in without waiting for the
    child to read."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


class McapOut:
    """A recorder's output to an MCAP file, written by a child process pinned to a core of its own;
    poses are handed over through shared memory."""

    def __init__(self, path: Path, metadata: dict[str, str]) -> None:
        try:
            import mcap.writer  # noqa: F401 - fail here, not in the child, when it is missing
        except ImportError:
            from fleetsim.recording.schemas import NEEDS

            raise FleetSimError(NEEDS) from None
        try:
            path.open("wb").close()  # a bad path is the caller's error, said at once
        except OSError as exc:
            raise ConfigError(f"--record {path}: {exc.strerror or exc}") from None
        self.path = path
        self._proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._pipe: IO[bytes] = self._proc.stdin  # type: ignore[assignment]
        widen(self._pipe)
        ready = self._proc.stdout.readline() if self._proc.stdout else b""  # imports done
        if ready.strip() != b"ready":
            raise FleetSimError(f"recording {path}: {self._why()}")
        self._known: set[str] = set()  # topics announced to the child
        acks = self._proc.stdout.fileno()  # type: ignore[union-attr]
        self._slots = PoseSlots(acks, lambda: FleetSimError(f"recording {path}: {self._why()}"))
        self._send(("metadata", metadata))

    def channel(self, topic: str, schema_name: str, encoding: str, schema: bytes) -> None:
        """Announce `topic` (once) with its schema."""
        if topic not in self._known:
            self._known.add(topic)
            self._send(("channel", topic, schema_name, encoding, schema))

    def message(self, topic: str, time_ns: int, data: bytes) -> None:
        """Write an encoded message."""
        self._send(("message", topic, time_ns, data))

    def fleet(
        self, topic: str, time_ns: int, head: bytes, pos: np.ndarray, quat: np.ndarray
    ) -> None:
        """A `/fleet` PointCloud: `head` (the message without its data), and the robots'
        positions (N, 3) and quaternions (N, 4), handed over in shared memory (`PoseSlots`)
        and made into points by the child."""
        if not self._slots.fits(len(pos)):
            self.flush(force=True)  # (the child frees the old slots first)
            self._send(("slots", *self._slots.remap(len(pos))))
        if self._slots.full:
            self.flush(force=True)  # the child must have the jobs it is to free slots from
        slot = self._slots.put(pos, quat)
        self._send(("fleet", topic, time_ns, head, len(pos), slot))

    def state(self, topic: str, time_ns: int, table: dict[str, Any]) -> None:
        """A `/fleet/state` table: `state` (uint8 bytes), `task` (list or None), `battery`
        (float32 bytes or None), `speed` (float32 bytes), made JSON by the child."""
        self._send(("state", topic, time_ns, table))

    def actions(self, topic: str, items: list[tuple[str, float, str, str, str | None]]) -> None:
        """Action events, made JSON by the child: (kind, time, robot name, action class,
        reason or None) each."""
        self._send(("actions", topic, items))

    def names(self, names: dict[int, str]) -> None:
        """Body names by handle, for the collision events (sent once, then as bodies come)."""
        self._send(("names", names))

    def collisions(self, topic: str, time_ns: int, keys: np.ndarray) -> None:
        """A `collisions` event for the pairs of bodies with these int64 pair keys."""
        self._send(("collisions", topic, time_ns, keys.tobytes()))

    def _send(self, job: tuple[Any, ...]) -> None:
        try:
            pickle.dump(job, self._pipe, protocol=pickle.HIGHEST_PROTOCOL)
        except (BrokenPipeError, OSError):
            raise FleetSimError(f"recording {self.path}: {self._why()}") from None

    def flush(self, force: bool = False) -> None:
        """The step is over: hand what was sent to the child every `FLUSH_FRAMES` frames (or
        now, with `force`). Each hand-over wakes the child on the other core, which costs
        the simulation more than the bytes."""
        if not force and self._slots.unflushed < FLUSH_FRAMES:
            return
        self._slots.unflushed = 0
        try:
            self._pipe.flush()
        except (BrokenPipeError, OSError):
            raise FleetSimError(f"recording {self.path}: {self._why()}") from None

    def close(self) -> None:
        """Send what is pending, let the child finish the file (summary, index) and wait."""
        if self._pipe.closed:
            return
        try:
            pickle.dump(None, self._pipe)
            self._pipe.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self._proc.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._slots.close()
        if self._proc.returncode != 0:
            raise FleetSimError(f"recording {self.path}: {self._why()}")

    def _why(self) -> str:
        self._proc.wait(CLOSE_TIMEOUT_S)
        err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
        lines = [line for line in err.strip().splitlines() if line.strip()]
        return lines[-1] if lines else f"the writer exited with {self._proc.returncode}"
