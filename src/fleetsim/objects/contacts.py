"""`ContactEvents`: collision pairs that started or ended, told to the simulation and each object.

`collision_started` / `collision_ended` go out on the simulation's bus as `(obj_a, obj_b)` and to
handlers an object registered with `obj.on(...)` as `(obj, other)`. Optionally colliding bodies
are tinted red while they touch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from fleetsim.backend import Backend
from fleetsim.errors import ConfigError
from fleetsim.events import EventBus, FirstError, names_from

COLLISION_EVENTS = names_from("collisions")  # collision_started, collision_ended
HIGHLIGHT = (0.9, 0.1, 0.1, 1.0)

Handler = Callable[[Any, Any], Any]


class ContactEvents:
    """The `collision_started` and `collision_ended` events, on the simulation and per object, and
    the red tint of touching bodies in the GUI."""

    def __init__(self, events: EventBus, backend: Backend, objects: dict[int, Any]) -> None:
        self._events = events
        self._backend = backend
        self._objects = objects
        self.color_change = False
        events.declare(*COLLISION_EVENTS)
        self._handlers: dict[int, dict[str, list[Handler]]] = defaultdict(lambda: defaultdict(list))
        self._known: dict[int, Any] = {}  # objects in active pairs, kept to report their end
        self._touching: dict[int, int] = defaultdict(int)
        self._colors: dict[int, tuple[float, ...]] = {}

    def on(self, handle: int, event: str, handler: Handler) -> None:
        """Call `handler(obj, other)` on `event` for the object with `handle`."""
        if event not in COLLISION_EVENTS:
            raise ConfigError(f"objects emit {', '.join(COLLISION_EVENTS)}; got '{event}'")
        self._handlers[handle][event].append(handler)

    def forget(self, handle: int) -> None:
        """Drop the handlers of a removed object."""
        self._handlers.pop(handle, None)

    def reset(self) -> None:
        """Drop every handler and tint (the world was emptied)."""
        self._handlers.clear()
        self._known.clear()
        self._touching.clear()
        self._colors.clear()

    def publish(self, result: Any) -> None:
        """Tell every pair that started or ended (`result`: a collision `CheckResult`). A
        handler that raises (or removes a body) does not stop the other pairs' events; the
        first error is raised at the end."""
        if not (result.started_keys.size or result.ended_keys.size) or self._nobody_listens():
            return  # the usual step; and a big fleet's hundreds of contacts nobody hears
        errors = FirstError()
        for a, b in result.started:
            oa, ob = (
                self._known.get(a, self._objects.get(a)),
                self._known.get(b, self._objects.get(b)),
            )
            self._known[a], self._known[b] = oa, ob
            self._tint(a, +1)
            self._tint(b, +1)
            with errors:
                self._emit("collision_started", a, b, oa, ob)
        for a, b in result.ended:  # (a pair that started while nobody listened is not in _known)
            oa = self._known.get(a, self._objects.get(a))
            ob = self._known.get(b, self._objects.get(b))
            self._tint(a, -1)
            self._tint(b, -1)
            with errors:
                self._emit("collision_ended", a, b, oa, ob)
        errors.raise_()

    def _nobody_listens(self) -> bool:
        return not (
            self.color_change
            or self._handlers
            or any(self._events.has_handlers(event) for event in COLLISION_EVENTS)
        )

    def _emit(self, event: str, a: int, b: int, oa: Any, ob: Any) -> None:
        errors = FirstError()
        with errors:
            self._events.emit(event, oa, ob)
        for handler in tuple(self._handlers.get(a, {}).get(event, ())):
            with errors:
                handler(oa, ob)
        for handler in tuple(self._handlers.get(b, {}).get(event, ())):
            with errors:
                handler(ob, oa)
        errors.raise_()

    def _tint(self, handle: int, change: int) -> None:
        self._touching[handle] += change
        count = self._touching[handle]
        if count <= 0:
            self._touching.pop(handle, None)
            self._known.pop(handle, None)
        obj = self._objects.get(handle)
        if not self.color_change or obj is None or obj.is_removed:
            return
        if change > 0 and count == 1:
            self._colors[handle] = self._backend.base_color(obj.object_id)
            self._backend.set_color(obj.object_id, HIGHLIGHT)
        elif count <= 0 and handle in self._colors:
            self._backend.set_color(obj.object_id, self._colors.pop(handle))
