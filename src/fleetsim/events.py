"""`EventBus`: named events with ordered handlers (pre_step, object_spawned, paused, ...)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from fleetsim.errors import ConfigError, closest

Handler = Callable[..., Any]

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
