"""`PoseSlots`: the fleet's poses handed to the writer process through shared memory.

A ring of `SLOTS` slots in a file mapped by both processes (in /dev/shm where there is one),
each holding one frame's float32 positions (N, 3) and quaternions (N, 4). The simulation
converts its float64 arrays straight into a free slot (one pass, no pipe copy) and sends the
slot's number with the frame's job; the writer reads the slot in place and acknowledges it with
one byte on its stdout. Slots are used in turn and acknowledged in order, so a count of the
unacknowledged ones says which are free (read once half the slots are out); when all are out,
the simulation waits for the writer.
The writer unlinks the file once it has mapped it, so nothing is left behind if either dies.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from collections.abc import Callable

import numpy as np

SLOTS = 8
BYTES_PER_ROBOT = 28  # float32 x, y, z and qx, qy, qz, qw
SHM_DIR = "/dev/shm"


class PoseSlots:
    """Shared memory holding each recorded frame's poses, read by the writer process."""

    def __init__(self, acks: int, gone: Callable[[], Exception]) -> None:
        """`acks`: the file descriptor the writer acknowledges slots on; `gone()`: the error to
        raise when the writer has exited."""
        self._acks, self._gone = acks, gone
        self._map: mmap.mmap | None = None
        self.path = ""
        self.slot_bytes = 0
        self._next = 0
        self._pending = 0  # slots given to the writer and not yet acknowledged
        self.unflushed = 0  # slots filled since their jobs were last handed over (`McapOut`)

    @property
    def full(self) -> bool:
        """Whether every slot is with the writer (`put` would wait)."""
        return self._pending >= SLOTS

    def fits(self, robots: int) -> bool:
        """Whether the slots hold `robots` poses."""
        return self._map is not None and BYTES_PER_ROBOT * robots <= self.slot_bytes

    def remap(self, robots: int) -> tuple[str, int]:
        """A new ring for `robots` (with room to grow), once the writer has let go of every
        slot. Returns (path, slot bytes) for the writer to map."""
        self.wait(0)
        self.close()
        self.slot_bytes = BYTES_PER_ROBOT * max(64, 1 << max(robots - 1, 0).bit_length())
        folder = SHM_DIR if os.path.isdir(SHM_DIR) else None
        fd, self.path = tempfile.mkstemp(prefix="fleetsim-poses-", dir=folder)
        try:
            os.ftruncate(fd, SLOTS * self.slot_bytes)
            self._map = mmap.mmap(fd, SLOTS * self.slot_bytes)
        finally:
            os.close(fd)
        return self.path, self.slot_bytes

    def put(self, pos: np.ndarray, quat: np.ndarray) -> int:
        """Copy (N, 3) positions and (N, 4) quaternions (any float dtype) into the next free
        slot as float32; returns its number."""
        if self._pending >= SLOTS // 2:  # acknowledgements read now and then: fewer syscalls
            self.wait(SLOTS - 1)
        slot, n = self._next, len(pos)
        base = slot * self.slot_bytes
        np.copyto(np.ndarray((n, 3), np.float32, self._map, base), pos, casting="same_kind")
        np.copyto(
            np.ndarray((n, 4), np.float32, self._map, base + 12 * n), quat, casting="same_kind"
        )
        self._next = (slot + 1) % SLOTS
        self._pending += 1
        self.unflushed += 1
        return slot

    def wait(self, most: int) -> None:
        """Take the writer's acknowledgements; block until at most `most` slots are pending."""
        while True:
            block = self._pending > most
            os.set_blocking(self._acks, block)
            try:
                got = os.read(self._acks, 4096)
            except BlockingIOError:
                return
            if not got:
                raise self._gone()
            self._pending -= len(got)
            if self._pending <= most:
                return

    def close(self) -> None:
        """Unmap and remove the shared memory."""
        if self._map is not None:
            self._map.close()
            self._map = None
        if self.path:
            with contextlib.suppress(FileNotFoundError):  # the writer unlinks it once mapped
                os.unlink(self.path)
            self.path = ""
