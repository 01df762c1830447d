"""`EventBus`: named events with ordered handlers, and `CATALOGUE`: every event there is.

Every event a simulation emits is in `CATALOGUE`, one row each: its name, what emits it, when
in the step it fires, the handler it calls (a typed signature) and what that carries. The bus
of a simulation knows them all; plugins may `declare` their own. The guide's events page is
written from the table (`python tools/docs_pages.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fleetsim.errors import ConfigError, closest

Handler = Callable[..., Any]
StepHandler = Callable[[Any, float], object]  # (sim, dt)
SimHandler = Callable[[Any], object]  # (sim)
ObjectHandler = Callable[[Any], object]  # (the SimObject)
PairHandler = Callable[[Any, Any], object]  # (SimObject, SimObject)
ActionHandler = Callable[[Any, Any], object]  # (agent, action)
DeviceHandler = Callable[[str, Any, float], object]  # (name, state, simulated time)
FaultHandler = Callable[[Any, dict[str, Any]], object]  # (sim, fault row)
ScanHandler = Callable[[Any, list[Any]], object]  # (sim, lidar groups)
FieldHandler = Callable[[Any, str], object]  # (agent, field state)


@dataclass(frozen=True)
class EventSpec:
    """One event: its name, what emits it, when, the handler it calls and what that gets."""

    name: str
    source: str  # core, objects, collisions, sensors, actions, devices, faults
    when: str
    handler: str  # the handler's signature, as the guide shows it
    carries: str
    kind: Any = Handler  # the handler's type (one of the aliases above)


CATALOGUE: tuple[EventSpec, ...] = (
    EventSpec("pre_step", "core", "first in each step, before agents move",
              "(sim, dt)", "the simulation and the step in seconds", StepHandler),
    EventSpec("post_step", "core", "last in each step, after the collision check",
              "(sim, dt)", "the simulation and the step in seconds", StepHandler),
    EventSpec("object_spawned", "objects", "when a body is made (in a step or outside)",
              "(obj)", "the new `SimObject` (or `Agent`)", ObjectHandler),
    EventSpec("object_removed", "objects", "when a body is removed",
              "(obj)", "the removed `SimObject`", ObjectHandler),
    EventSpec("object_renamed", "objects", "when an object's `name` is set",
              "(obj)", "the renamed `SimObject`", ObjectHandler),
    EventSpec("collision_started", "collisions", "in a step's collision check, per new pair",
              "(obj_a, obj_b)", "the two `SimObject`s now touching", PairHandler),
    EventSpec("collision_ended", "collisions", "in a step's collision check, per pair apart",
              "(obj_a, obj_b)", "the two `SimObject`s no longer touching", PairHandler),
    EventSpec("lidar_scanned", "sensors", "in a step's sensing phase, after the collision "
              "check, when any lidar was due",
              "(sim, groups)", "the simulation and the `LidarGroup`s that scanned (their "
              "`ranges`, `stamps`)", ScanHandler),
    EventSpec("safety_field_changed", "sensors", "in a step's sensing phase, when a robot's "
              "safety field state changes (on its scanner's scan)",
              "(agent, state)", "the agent and its state now: `clear`, `warning` (slowed) or "
              "`protective` (stopped)", FieldHandler),
    EventSpec("person_contact", "people", "in a step's people phase, after the collision "
              "check, when a person starts touching a robot",
              "(sim, row)", "the simulation and the contact: person id, robot name, gap (m, "
              "negative: overlap)", FaultHandler),
    EventSpec("behavior_finished", "behavior", "after a step, when a person's or robot's "
              "behaviour tree ends", "(sim, row)", "the simulation and the tree: its owner's "
              "name, kind (person or robot), status (success or failure) and the time",
              FaultHandler),
    EventSpec("action_started", "actions", "when an agent's action starts (agents' phase)",
              "(agent, action)", "the agent and its action", ActionHandler),
    EventSpec("action_completed", "actions", "when an action ends done",
              "(agent, action)", "the agent and its action", ActionHandler),
    EventSpec("action_failed", "actions", "when an action ends failed (`action.message`)",
              "(agent, action)", "the agent and its action", ActionHandler),
    EventSpec("door_changed", "devices", "when a door's mode changes (its step, a request)",
              "(name, mode, time)", "the door, its mode (`open`, `opening`, ...), sim time",
              DeviceHandler),
    EventSpec("lift_changed", "devices", "when a lift's state changes (its step, a request)",
              "(name, state, time)", "the lift, its state (level, doors, session, aboard), "
              "sim time", DeviceHandler),
    EventSpec("fault_started", "faults", "when a fault begins (in `pre_step`; a network fault "
              "when it hits a message)",
              "(sim, row)", "the simulation and the fault's row (time, kind, target, ...)",
              FaultHandler),
    EventSpec("fault_ended", "faults", "when a fault with a duration ends (in `pre_step`)",
              "(sim, row)", "the simulation and the fault's row", FaultHandler),
    EventSpec("paused", "core", "when `sim.pause()` pauses a run",
              "(sim)", "the simulation", SimHandler),
    EventSpec("resumed", "core", "when `sim.resume()` resumes it",
              "(sim)", "the simulation", SimHandler),
    EventSpec("reset", "core", "after `sim.reset()` removed every body",
              "(sim)", "the simulation", SimHandler),
    EventSpec("closing", "core", "when the simulation closes, before PyBullet goes",
              "(sim)", "the simulation (recorders and live views close here)", SimHandler),
)  # fmt: skip
NAMES: tuple[str, ...] = tuple(spec.name for spec in CATALOGUE)


def names_from(source: str) -> tuple[str, ...]:
    """The names of the events `source` emits (core, objects, collisions, ...)."""
    return tuple(spec.name for spec in CATALOGUE if spec.source == source)


log = logging.getLogger(__name__)


class FirstError:
    """Keeps the first exception of a series of calls that must all run; the rest are logged.

    Use: `errors = FirstError()`, then `with errors: call()` for each call, then `errors.raise_()`.
    """

    def __init__(self) -> None:
        self.error: Exception | None = None

    def __enter__(self) -> FirstError:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        if not isinstance(exc, Exception):
            return False  # no error, or KeyboardInterrupt / SystemExit: let it through
        if self.error is None:
            self.error = exc
        else:
            log.error("a further error in the same step: %s: %s", type(exc).__name__, exc)
        return True

    def raise_(self) -> None:
        """Raise the first error kept, if any (and forget it)."""
        error, self.error = self.error, None
        if error is not None:
            raise error


class EventBus:
    """Handlers per event name, called in registration order.

    Only declared event names are accepted, so a typo in `on("pre_stpe", ...)` is an error that
    names the closest event instead of a handler that never runs.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._handlers: dict[str, list[Handler]] = {name: [] for name in names}

    @property
    def names(self) -> tuple[str, ...]:
        """The declared event names."""
        return tuple(self._handlers)

    def declare(self, *names: str) -> None:
        """Add event names (layers above the core declare their own, e.g. collision events)."""
        for name in names:
            self._handlers.setdefault(name, [])

    def _handlers_of(self, event: str) -> list[Handler]:
        try:
            return self._handlers[event]
        except KeyError:
            guess = closest(event, self._handlers)
            hint = (
                f"did you mean '{guess}'?"
                if guess
                else f"known events: {', '.join(self._handlers)}"
            )
            raise ConfigError(f"unknown event '{event}': {hint}") from None

    def on(self, event: str, handler: Handler) -> Handler:
        """Call `handler(*args)` whenever `event` is emitted. Returns the handler."""
        self._handlers_of(event).append(handler)
        return handler

    def off(self, event: str, handler: Handler) -> None:
        """Stop calling `handler` for `event` (no error if it was not registered)."""
        handlers = self._handlers_of(event)
        if handler in handlers:
            handlers.remove(handler)

    def has_handlers(self, event: str) -> bool:
        """Whether anything listens to `event`."""
        return bool(self._handlers_of(event))

    def emit(self, event: str, *args: Any) -> None:
        """Call every handler; if some raise, the others still run and the first error is
        raised afterwards."""
        errors = FirstError()
        for handler in tuple(self._handlers_of(event)):
            with errors:
                handler(*args)
        errors.raise_()
