"""`ActionSystem`: a FIFO action queue per agent, and waking only the agents that need it.

Each step it updates the current action of agents that arrived at a goal, whose timers came due,
or whose action polls. Events `action_started`, `action_completed`, `action_failed` are emitted on
the simulation's bus with `(agent, action)`.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.actions.base import Action, ActionStatus
from fleetsim.actions.routes import GoTo
from fleetsim.errors import ConfigError
from fleetsim.events import EventBus, FirstError, names_from

if TYPE_CHECKING:
    from fleetsim.agents import Agent

ACTION_EVENTS = names_from("actions")  # action_started, action_completed, action_failed
_TIME_EPS = 1e-9
# Actions one agent may start in one step. Chains of actions that finish at once (a `wait 0`
# repeated, a pick that fails at once) carry on in the next step instead of looping forever.
MAX_STARTS_PER_STEP = 1000


FAILURE_EXAMPLES = 3  # robots named for each failure reason


class ActionSystem:
    """The per-agent action queues of a simulation (`sim.actions`): ticks the current actions of
    agents that have something to do, counts completions and failures by reason."""

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
        self._starting: set[int] = set()  # agents inside _start_next (no re-entry)
        self._starts: Counter[int] = Counter()  # actions started per agent this step
        self._deferred: set[int] = set()  # agents whose next start waits for the next step
        self._errors = FirstError()
        self.completed_count = 0
        self.failed_count = 0
        # failures by reason (the robot's name taken out, so one reason across a fleet is one
        # line), with the first few robots each happened to
        self.failure_reasons: Counter[str] = Counter()
        self.failure_robots: dict[str, list[str]] = {}
        """How many actions failed for each reason ("Pick: no pickable object within ...")."""

    # -- queue API (called through Agent) -----------------------------------------------------

    def add(self, agent: Agent, action: Action) -> None:
        """Queue `action` for `agent` (it starts when the ones before it end)."""
        self._check(action)
        self._queue(agent).append(action)
        if agent.handle not in self._current:
            self._start_next(agent)
            self._errors.raise_()

    def go_to(self, agent: Agent, node: str | int, tolerance: float) -> GoTo:
        """Queue a `GoTo` (for `Agent.go_to`, which cannot import the actions)."""
        action = GoTo(node, tolerance)
        self.add(agent, action)
        return action

    def execute(self, agent: Agent, action: Action) -> None:
        """Cancel the agent's current action and run `action` now."""
        self._check(action)
        self._cancel_current(agent)
        self._queue(agent).appendleft(action)
        self._start_next(agent)
        self._errors.raise_()

    def clear(self, agent: Agent) -> None:
        """Cancel the agent's current action and empty its queue."""
        self._cancel_current(agent)
        self._queue(agent).clear()
        agent.stop()

    def current(self, agent: Agent) -> Action | None:
        """The agent's running action, or None."""
        return self._current.get(agent.handle)

    def queued(self, agent: Agent) -> list[Action]:
        """The agent's actions waiting behind the current one."""
        return list(self._queues.get(agent.handle, ()))

    def wake_at(self, agent: Agent, time: float) -> None:
        """Tick the agent's current action again at simulated `time`."""
        heapq.heappush(self._timers, (time, next(self._seq), agent.handle))

    def reset(self) -> None:
        """Forget every queue (after the simulation is reset)."""
        self._queues.clear()
        self._current.clear()
        self._agents.clear()
        self._by_motion.clear()
        self._timers.clear()
        self._polling.clear()
        self._starts.clear()
        self._deferred.clear()
        self.completed_count = self.failed_count = 0
        self.failure_reasons.clear()
        self.failure_robots.clear()

    # -- the step -------------------------------------------------------------------------

    def tick(
        self, now: float, dt: float, arrived_motion: np.ndarray, joints_done: np.ndarray
    ) -> None:
        """Update the actions that have something to react to at simulated time `now`: agents
        that arrived (motion handles), whose joints reached their targets (body handles), whose
        timers came due, or whose action polls.

        An action whose `start` or `update` raises ends FAILED with the error as its message;
        every other agent is still updated, and the first error is raised at the end.
        """
        self._starts.clear()
        deferred, self._deferred = self._deferred, set()
        for handle in sorted(deferred):
            if handle in self._agents:
                self._start_next(self._agents[handle])
        woken = {self._by_motion[m] for m in arrived_motion.tolist() if m in self._by_motion}
        woken.update(h for h in joints_done.tolist() if h in self._current)
        while self._timers and self._timers[0][0] <= now + _TIME_EPS:
            woken.add(heapq.heappop(self._timers)[2])
        woken |= self._polling
        for handle in sorted(woken):  # sorted: the same order every run
            action = self._current.get(handle)
            if action is not None:
                agent = self._agents[handle]
                self._guarded(action, action.update, agent, dt)
                self._settle(agent, action)
        self._errors.raise_()

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
        """Start queued actions until one is running. Iterative: an action that finishes at
        once and queues the next from `on_done` continues this loop, not a recursion."""
        handle = agent.handle
        if handle in self._starting:
            return  # an outer call of this loop goes on
        self._starting.add(handle)
        try:
            queue = self._queue(agent)
            while queue and handle not in self._current and handle in self._agents:
                if self._starts[handle] >= MAX_STARTS_PER_STEP:
                    self._deferred.add(handle)
                    return
                self._starts[handle] += 1
                action = queue.popleft()
                self._current[handle] = action
                action.status = ActionStatus.IN_PROGRESS
                action._bind(self)
                with self._errors:
                    self._events.emit("action_started", agent, action)
                self._guarded(action, action.start, agent)
                if action.polls:
                    self._polling.add(handle)
                self._settle(agent, action)
        finally:
            self._starting.discard(handle)

    def _guarded(self, action: Action, method: Callable[..., object], *args: object) -> None:
        """Call an action's method; if it raises, the action fails with the error (kept for
        raising once everything else is done)."""
        with self._errors:
            try:
                method(*args)
            except Exception as exc:
                if not action.is_complete():
                    action.fail(f"{type(action).__name__} raised {type(exc).__name__}: {exc}")
                raise

    def _settle(self, agent: Agent, action: Action) -> None:
        """If `action` finished, report it and start the next one."""
        if not action.is_complete():
            return
        self._current.pop(agent.handle, None)
        self._polling.discard(agent.handle)
        with self._errors:
            self._report(agent, action)
            if action.on_done is not None and action.status is not ActionStatus.CANCELLED:
                action.on_done(agent, action)
        self._start_next(agent)

    def _report(self, agent: Agent, action: Action) -> None:
        if action.status is ActionStatus.COMPLETED:
            self.completed_count += 1
            self._events.emit("action_completed", agent, action)
        elif action.status is ActionStatus.FAILED:
            self.failed_count += 1
            message = action.error_message or "failed"
            if agent.name:
                message = message.replace(agent.name, "<robot>")
            reason = f"{type(action).__name__}: {message}"
            self.failure_reasons[reason] += 1
            robots = self.failure_robots.setdefault(reason, [])
            if len(robots) < FAILURE_EXAMPLES and agent.name not in robots:
                robots.append(agent.name)
            self._events.emit("action_failed", agent, action)

    def _cancel_current(self, agent: Agent) -> None:
        action = self._current.pop(agent.handle, None)
        self._polling.discard(agent.handle)
        if action is not None:
            action.stop(agent)
            action.status = ActionStatus.CANCELLED

    def _forget(self, obj: object) -> None:
        """A removed agent's current and queued actions end FAILED (`action_failed` each)."""
        handle = getattr(obj, "handle", None)
        if handle not in self._agents:
            return
        agent = self._agents.pop(handle)
        ended = [self._current.pop(handle)] if handle in self._current else []
        ended += self._queues.pop(handle, deque())
        self._polling.discard(handle)
        self._deferred.discard(handle)
        self._by_motion = {m: h for m, h in self._by_motion.items() if h != handle}
        for action in ended:
            action.fail(f"{agent.name} was removed from the simulation")
            with self._errors:
                self._report(agent, action)
        self._errors.raise_()
