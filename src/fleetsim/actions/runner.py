"""`ActionSystem`: a FIFO action queue per agent, and waking only the agents that need it.

Each step it updates the current action of agents that arrived at a goal, whose timers came due,
or whose action polls. Events `action_started`, `action_completed`, `action_failed` are emitted on
the simulation's bus with `(agent, action)`.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.actions.base import Action, ActionStatus
from fleetsim.errors import ConfigError
from fleetsim.events import EventBus

if TYPE_CHECKING:
    from fleetsim.agents import Agent

ACTION_EVENTS = ("action_started", "action_completed", "action_failed")
_TIME_EPS = 1e-9


class ActionSystem:
    def __init__(self, events: EventBus) -> None:
        self._events = events
        events.declare(*ACTION_EVENTS)
        events.on("object_removed", self._forget)
        self._queues: dict[int, deque[Action]] = {}
        self._current: dict[int, Action] = {}
        self._agents: dict[int, Agent] = {}
        self._by_motion: dict[int, int] = {}
        self._timers: list[tuple[float, int, int]] = []
        self._seq = itertools.count()
        self._polling: set[int] = set()
        self.completed_count = 0
        self.failed_count = 0

    # -- queue API (called through Agent) -----------------------------------------------------

    def add(self, agent: Agent, action: Action) -> None:
        self._check(action)
        self._queue(agent).append(action)
        if agent.handle not in self._current:
            self._start_next(agent)

    def execute(self, agent: Agent, action: Action) -> None:
        self._check(action)
        self._cancel_current(agent)
        self._queue(agent).appendleft(action)
        self._start_next(agent)

    def clear(self, agent: Agent) -> None:
        self._cancel_current(agent)
        self._queue(agent).clear()
        agent.stop()

    def current(self, agent: Agent) -> Action | None:
        return self._current.get(agent.handle)

    def queued(self, agent: Agent) -> list[Action]:
        return list(self._queues.get(agent.handle, ()))

    def wake_at(self, agent: Agent, time: float) -> None:
        heapq.heappush(self._timers, (time, next(self._seq), agent.handle))

    def reset(self) -> None:
        """Forget every queue (after the simulation is reset)."""
        self._queues.clear()
        self._current.clear()
        self._agents.clear()
        self._by_motion.clear()
        self._timers.clear()
        self._polling.clear()
        self.completed_count = self.failed_count = 0

    # -- the step -------------------------------------------------------------------------

    def tick(
        self, now: float, dt: float, arrived_motion: np.ndarray, joints_done: np.ndarray
    ) -> None:
        """Update the actions that have something to react to at simulated time `now`: agents
        that arrived (motion handles), whose joints reached their targets (body handles), whose
        timers came due, or whose action polls."""
        woken = {self._by_motion[m] for m in arrived_motion.tolist() if m in self._by_motion}
        woken.update(h for h in joints_done.tolist() if h in self._current)
        while self._timers and self._timers[0][0] <= now + _TIME_EPS:
            woken.add(heapq.heappop(self._timers)[2])
        woken |= self._polling
        for handle in sorted(woken):  # sorted: the same order every run
            action = self._current.get(handle)
            if action is not None:
                agent = self._agents[handle]
                action.update(agent, dt)
                self._settle(agent, action)

    # -- internals ------------------------------------------------------------------------

    @staticmethod
    def _check(action: object) -> None:
        if not isinstance(action, Action):
            raise ConfigError(f"expected an Action (MoveTo, Pick, Drop, Wait, ...), got {action!r}")
        if action.status is not ActionStatus.NOT_STARTED:
            raise ConfigError(f"{action!r} was already used; create a new action")

    def _queue(self, agent: Agent) -> deque[Action]:
        handle = agent.handle
        if handle not in self._agents:
            self._agents[handle] = agent
            self._queues[handle] = deque()
            if agent.drives:
                self._by_motion[agent.motion_handle] = handle
        return self._queues[handle]

    def _start_next(self, agent: Agent) -> None:
        queue = self._queue(agent)
        while queue and agent.handle not in self._current:
            action = queue.popleft()
            self._current[agent.handle] = action
            action.status = ActionStatus.IN_PROGRESS
            action._bind(self)
            self._events.emit("action_started", agent, action)
            action.start(agent)
            if action.polls:
                self._polling.add(agent.handle)
            self._settle(agent, action)

    def _settle(self, agent: Agent, action: Action) -> None:
        """If `action` finished, report it and start the next one."""
        if not action.is_complete():
            return
        self._current.pop(agent.handle, None)
        self._polling.discard(agent.handle)
        if action.status is ActionStatus.COMPLETED:
            self.completed_count += 1
            self._events.emit("action_completed", agent, action)
        elif action.status is ActionStatus.FAILED:
            self.failed_count += 1
            self._events.emit("action_failed", agent, action)
        if action.on_done is not None and action.status is not ActionStatus.CANCELLED:
            action.on_done(agent, action)
        self._start_next(agent)

    def _cancel_current(self, agent: Agent) -> None:
        action = self._current.pop(agent.handle, None)
        self._polling.discard(agent.handle)
        if action is not None:
            action.stop(agent)
            action.status = ActionStatus.CANCELLED

    def _forget(self, obj: object) -> None:
        handle = getattr(obj, "handle", None)
        if handle in self._agents:
            self._current.pop(handle, None)
            self._queues.pop(handle, None)
            self._polling.discard(handle)
            self._agents.pop(handle)
            self._by_motion = {m: h for m, h in self._by_motion.items() if h != handle}
