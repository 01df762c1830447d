"""`Action` and `ActionStatus`: the unit of work an agent's queue runs.

Subclass `Action` and override `start`, `update` and (if it holds resources) `stop`. Call
`self.complete()` or `self.fail(message)` when done. By default `update` runs every step while the
action is current; built-in actions set `polls = False` and are woken only when their agent arrives
or a timer they set with `self.wake_at(t)` comes due, so a driving robot costs no Python per step.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fleetsim.agents import Agent


class ActionStatus(Enum):
    """Where an action is: NOT_STARTED, IN_PROGRESS, COMPLETED, FAILED or CANCELLED."""

    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({ActionStatus.COMPLETED, ActionStatus.FAILED, ActionStatus.CANCELLED})


class Waker(Protocol):
    """What an action can ask its runner: to wake it at a simulated time."""

    def wake_at(self, agent: Agent, time: float) -> None:
        """Call the agent's current action again at simulated `time`."""


class Action:
    """Base class of all actions. `status` and `error_message` say how it went."""

    polls: bool = True  # class default; an action may decide per instance in `start`

    def __init__(self) -> None:
        self.status = ActionStatus.NOT_STARTED
        self.error_message: str | None = None
        self._waker: Waker | None = None
        self.on_done: Callable[[Agent, Action], Any] | None = None
        """Called as `on_done(agent, action)` when the action completes or fails (chaining)."""

    # -- the contract ---------------------------------------------------------------------

    def start(self, agent: Agent) -> None:
        """Begin (set goals, check preconditions). Called once, when the action becomes current."""

    def update(self, agent: Agent, dt: float) -> None:
        """Make progress; called every step (polling actions) or when woken."""

    def stop(self, agent: Agent) -> None:
        """Clean up when cancelled (stop motion, release what the action holds)."""

    def is_complete(self) -> bool:
        """Whether it has ended: completed, failed or cancelled."""
        return self.status in TERMINAL

    # -- helpers for subclasses -----------------------------------------------------------

    def complete(self) -> None:
        """End it as COMPLETED."""
        self.status = ActionStatus.COMPLETED

    def fail(self, message: str) -> None:
        """End it as FAILED, with `message` as its `error_message`."""
        self.status = ActionStatus.FAILED
        self.error_message = message

    def wake_at(self, agent: Agent, time: float) -> None:
        """Ask for `update` at simulated time `time` (for actions with `polls = False`)."""
        if self._waker is not None:
            self._waker.wake_at(agent, time)

    def __repr__(self) -> str:
        detail = f": {self.error_message}" if self.error_message else ""
        return f"<{type(self).__name__} {self.status.value}{detail}>"

    def _bind(self, waker: Waker) -> None:
        self._waker = waker

    def describe(self) -> dict[str, Any]:
        """A summary for logs and reports."""
        return {
            "action": type(self).__name__,
            "status": self.status.value,
            "error": self.error_message,
        }
