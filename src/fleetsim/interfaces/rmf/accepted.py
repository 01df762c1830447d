"""`AcceptedCommands`: each robot as the commands accepted so far leave it, ahead of the step.

The HTTP side accepts a command at once and the simulation applies it at the start of its next
step. Answers given in between must follow the accepted commands, not the last step: after a
successful `toggle_teleop(true)` a navigate is refused at once, and `stop_robot` checks the
command that will be running. The HTTP thread records each accepted command here; the step
marks it applied when it runs it."""

from __future__ import annotations

import threading

import numpy as np

from fleetsim.interfaces.rmf.status import NO_COMMAND

KEEP = -2  # accept(): the command leaves the running command as it is


class AcceptedCommands:
    """The commands the HTTP side has accepted, ahead of the step that applies them: teleop, and the
    command id each robot will be running, so answers follow what was accepted."""

    def __init__(self, live_cmd_id: np.ndarray) -> None:
        n = len(live_cmd_id)
        self.teleop = np.zeros(n, dtype=bool)  # as accepted, read by the HTTP side
        self._live = live_cmd_id  # the step's running commands (the fleet's array)
        self._cmd = np.full(n, NO_COMMAND, dtype=np.int64)
        self._pending = np.zeros(n, dtype=np.int64)
        self._lock = threading.Lock()

    def accept(self, k: int, cmd_id: int = KEEP, teleop: bool | None = None) -> None:
        """Robot `k` has a command not yet applied; it starts `cmd_id` (NO_COMMAND: stops it)
        and sets teleop when given."""
        with self._lock:
            if not self._pending[k]:
                self._cmd[k] = self._live[k]
            if cmd_id != KEEP:
                self._cmd[k] = cmd_id
            if teleop is not None:
                self.teleop[k] = teleop
            self._pending[k] += 1

    def applied(self, k: int) -> None:
        """The step has applied the oldest of robot `k`'s accepted commands."""
        with self._lock:
            self._pending[k] -= 1

    def running(self, k: int) -> int:
        """The command robot `k` runs once its accepted commands are applied."""
        with self._lock:
            return int(self._cmd[k] if self._pending[k] else self._live[k])
