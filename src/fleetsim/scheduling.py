"""`CallbackScheduler`: user callbacks gated to a frequency in simulated time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.events import FirstError

Callback = Callable[[Any, float], Any]

_EPS = 1e-9


@dataclass
class _Entry:
    callback: Callback
    owner: Any
    period: float | None
    next_due: float = 0.0
    last_call: float | None = None


class CallbackScheduler:
    """Runs `callback(owner, dt)` every step, or at `frequency` Hz of simulated time.

    `dt` is the simulated time since that callback last ran (its period on the first call). A
    callback faster than the step rate runs once per step.
    """

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}
        self._next_id = 0

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, callback: Callback, owner: Any, frequency: float | None = None) -> int:
        """Register a callback; returns an id for `remove`. `frequency` in Hz, None = every step."""
        if not callable(callback):
            raise ConfigError(f"callback must be callable, got {callback!r}")
        if frequency is not None and not frequency > 0:
            raise ConfigError(
                f"callback frequency must be > 0 Hz (or None for every step), got {frequency}"
            )
        period = None if frequency is None else 1.0 / float(frequency)
        self._entries[self._next_id] = _Entry(callback, owner, period)
        self._next_id += 1
        return self._next_id - 1

    def remove(self, callback_id: int) -> None:
        """Stop calling the callback with `callback_id`."""
        self._entries.pop(callback_id, None)

    def remove_owner(self, owner: Any) -> None:
        """Drop every callback registered for `owner` (a removed object)."""
        self._entries = {k: e for k, e in self._entries.items() if e.owner is not owner}

    def keep_owner(self, owner: Any) -> None:
        """Drop every callback not registered for `owner` (objects gone after a reset)."""
        self._entries = {k: e for k, e in self._entries.items() if e.owner is owner}

    def rewind(self, now: float = 0.0) -> None:
        """Restart all schedules at simulated time `now` (after a reset)."""
        for entry in self._entries.values():
            entry.next_due = now
            entry.last_call = None

    def run(self, now: float, step_dt: float) -> None:
        """Call every callback that is due at simulated time `now`.

        A callback that raises does not stop the others; the first error is raised after all
        ran. Schedules advance before the call, so a raising callback is not called again at
        the same time.
        """
        errors = FirstError()
        for entry in tuple(self._entries.values()):
            if entry.period is None:
                elapsed = step_dt
            elif now + _EPS < entry.next_due:
                continue
            else:
                elapsed = entry.period if entry.last_call is None else now - entry.last_call
                while entry.next_due <= now + _EPS:
                    entry.next_due += entry.period
            entry.last_call = now
            with errors:
                entry.callback(entry.owner, elapsed)
        errors.raise_()
