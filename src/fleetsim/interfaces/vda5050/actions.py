"""`ActionQueue`: one vehicle's VDA 5050 actions (node, edge and instant) through their states,
as the standard's action rules say:

- an order's node and edge actions are listed WAITING when the order is accepted; a node's
  actions start when the vehicle reaches the node, an edge's when it leaves the edge's start;
- a started action is INITIALIZING for one step, then RUNNING for its duration (work time only:
  a pause holds it PAUSED), then FINISHED, or FAILED with a result description;
- blocking types: NONE lets the vehicle drive and other actions run; SOFT stops driving but lets
  other actions run; HARD stops driving and runs alone (the actions after it wait for it, and
  it waits for those before it);
- cancelling fails every action not yet finished, with the reason.

What an action does to the simulation (pick up a load, start charging, ...) is the vehicle's
business: it passes `Effects` that check an action when it starts (`begin`, returning the
seconds it takes, or raising `ActionError`) and do it when its time is up (`finish`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fleetsim.interfaces.vda5050.messages import (
    Action,
    ActionState,
    ActionStatus,
    BlockingType,
    Node,
)

OPEN = (ActionStatus.WAITING, ActionStatus.INITIALIZING, ActionStatus.RUNNING, ActionStatus.PAUSED)


class ActionError(Exception):
    """An action cannot be done; the message is its resultDescription."""


class Effects(Protocol):
    """What actions do to the vehicle (`VehicleEffects`)."""

    def begin(self, action: Action, node: Node | None) -> float:
        """Start `action` (at `node`, None for edge and instant actions); the seconds it takes."""

    def finish(self, action: Action, node: Node | None) -> None:
        """Finish `action`: what it does is done."""


@dataclass
class Job:
    """An action to run: its message, its reported state, its node and the work left."""

    action: Action
    state: ActionState
    node: Node | None  # the node it runs at (None: an edge or instant action)
    left: float = 0.0  # seconds of work left once RUNNING

    @property
    def blocking(self) -> BlockingType:
        """The action's blocking type (NONE, SOFT or HARD)."""
        return self.action.blocking_type


class ActionQueue:
    """A vehicle's node, edge and instant actions: started in order as their blocking types allow,
    run for their duration, their states reported."""

    def __init__(self, effects: Effects) -> None:
        self.effects = effects
        self.states: dict[str, ActionState] = {}  # actionId -> its state, as reported
        self.failures: list[tuple[Action, str]] = []  # failed since last asked (for errors)
        self._queued: list[Job] = []  # started by the order or an instant action, not running
        self._running: list[Job] = []

    # -- what the vehicle asks --------------------------------------------------------------

    def expect(self, actions: list[Action]) -> None:
        """List an accepted order's actions as WAITING (kept if already known)."""
        for a in actions:
            waiting = ActionState(
                action_id=a.action_id,
                action_type=a.action_type,
                action_description=a.action_description,
                action_status=ActionStatus.WAITING,
            )
            self.states.setdefault(a.action_id, waiting)

    def start(self, actions: list[Action], node: Node | None = None) -> None:
        """Queue `actions` to run in their order (the vehicle reached their node or edge, or
        they came as instant actions)."""
        for a in actions:
            state = self.states.get(a.action_id)
            if state is None or state.action_status not in OPEN:
                state = ActionState(
                    action_id=a.action_id,
                    action_type=a.action_type,
                    action_description=a.action_description,
                    action_status=ActionStatus.WAITING,
                )
                self.states[a.action_id] = state
            self._queued.append(Job(a, state, node))

    @property
    def busy(self) -> bool:
        """Whether any action is queued or running."""
        return bool(self._queued or self._running)

    @property
    def blocks_driving(self) -> bool:
        """A SOFT or HARD action is running or queued to run here."""
        jobs = self._queued + self._running
        return any(j.blocking is not BlockingType.NONE for j in jobs)

    def step(self, dt: float, paused: bool) -> bool:
        """Advance the running actions by `dt` seconds and start what may start; True when
        some action's status changed."""
        changed = False
        for job in list(self._running):
            status = job.state.action_status
            if paused:
                if status is ActionStatus.RUNNING:
                    changed |= self._set(job, ActionStatus.PAUSED)
                continue
            if status in (ActionStatus.INITIALIZING, ActionStatus.PAUSED):
                changed |= self._set(job, ActionStatus.RUNNING)
                if status is ActionStatus.INITIALIZING:
                    continue  # INITIALIZING lasts one step
            job.left -= dt
            if job.left <= 1e-9:
                self._end(job)
                changed = True
        if not paused:
            changed |= self._start_queued()
        return changed

    def cancel(self, reason: str) -> None:
        """Fail every action not yet finished (cancelOrder, or a new order)."""
        for state in self.states.values():
            if state.action_status in OPEN:
                state.action_status = ActionStatus.FAILED
                state.result_description = reason
        self._queued, self._running = [], []

    def forget_finished(self) -> None:
        """Drop the states of finished and failed actions (a new order starts clean)."""
        self.states = {k: s for k, s in self.states.items() if s.action_status in OPEN}

    # -- helpers ----------------------------------------------------------------------------

    def _start_queued(self) -> bool:
        changed = False
        while self._queued:
            job = self._queued[0]
            hard_running = any(j.blocking is BlockingType.HARD for j in self._running)
            if hard_running or (job.blocking is BlockingType.HARD and self._running):
                break  # a HARD action runs alone, in its turn
            self._queued.pop(0)
            changed = True
            try:
                job.left = max(float(self.effects.begin(job.action, job.node)), 0.0)
            except ActionError as exc:
                self._fail(job, str(exc))
                continue
            self._set(job, ActionStatus.INITIALIZING)
            self._running.append(job)
        return changed

    def _end(self, job: Job) -> None:
        self._running.remove(job)
        try:
            self.effects.finish(job.action, job.node)
        except ActionError as exc:
            self._fail(job, str(exc))
            return
        self._set(job, ActionStatus.FINISHED)

    def _fail(self, job: Job, why: str) -> None:
        job.state.action_status = ActionStatus.FAILED
        job.state.result_description = why
        self.failures.append((job.action, why))

    @staticmethod
    def _set(job: Job, status: ActionStatus) -> bool:
        if job.state.action_status is status:
            return False
        job.state.action_status = status
        return True
