"""Stalls: robots whose task has stopped advancing. Progress is counted, not detections: a
robot with a task advances when its way to the place it is bound for (along its route) is
shorter than it has been on this leg (by `CLOSER_M`), when it reaches a place or finishes its
work there; driving back and forth (stepping aside and back, again and again) is not progress,
and neither is driving a route that goes elsewhere (stepping aside). One whose task has not
advanced for `after_s` simulated seconds is stalled, reported with the robot, its task, the node
it stands at and what it waits for, until it advances again.

Waiting on something that is itself progressing is not a stall: a robot at work (picking,
dropping) is progressing, and so is one queued behind a robot that advanced within `after_s`
(a queue that moves). A robot without a task (parked, charging) cannot stall. The time a robot
is itself stopped by a fault (`fleetsim.faults`: a stop, a breakdown) does not count towards its
stall: the fault is in the faults table. A robot held behind it does count: waiting for a
broken-down robot is a stall of the fleet, which could have gone around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fleetsim.fleet.manager import FleetManager

STALL_AFTER_S = 120.0
CHECK_EVERY_S = 1.0
CLOSER_M = 0.5  # nearer the place than ever on this leg by this much: progress
MAX_DETOURS = 5  # a leg's detours measured afresh (stepping aside and back is no detour)


@dataclass
class Stall:
    """A robot whose task stopped advancing: from `since` (its last progress), a stall from
    `time` (`since` + the stall time), until `ended` (None: still stalled)."""

    time: float
    robot: str
    task: str
    node: str  # where it stands (the node it last passed)
    waits_for: str | None  # the node it is refused, and who holds it; None: not waiting
    since: float
    ended: float | None = None

    def row(self) -> dict[str, Any]:
        """The stall as a row of the results table."""
        return {
            "time": self.time,
            "robot": self.robot,
            "task": self.task,
            "node": self.node,
            "waits_for": self.waits_for,
            "since": self.since,
            "ended": self.ended,
        }


class StallWatch:
    """Which robots' tasks stopped advancing, and since when (`records`, `stalled`)."""

    def __init__(self, robots: int, after_s: float = STALL_AFTER_S) -> None:
        self.after_s = float(after_s)
        self.records: list[Stall] = []  # every stall, in the order they began
        self.progress_at = np.zeros(robots)  # simulated time of each robot's last progress
        self._goal = np.full(robots, -1, dtype=np.int64)  # the node of the place bound for
        self._best = np.full(robots, np.inf)  # the nearest it has been to it on this leg
        self._detours = np.zeros(robots, dtype=np.int64)  # times sent round on this leg
        self._open: dict[int, Stall] = {}  # robot -> its stall now
        self._next_check = 0.0
        self._checked = 0.0

    def bound_for(self, i: int, node: int) -> None:
        """Robot i sets off for the place at `node` (a new leg of its task)."""
        self._goal[i], self._best[i], self._detours[i] = node, np.inf, 0

    def detour(self, i: int) -> None:
        """Robot i was sent round to the same place (a deadlock, a closed lane): the way left
        is measured along the new route from here, up to `MAX_DETOURS` times a leg (more is a
        fleet going round in circles)."""
        if self._detours[i] < MAX_DETOURS:
            self._detours[i] += 1
            self._best[i] = np.inf

    def advanced(self, i: int, now: float) -> None:
        """Robot i's task advanced (assigned, a place reached, work done)."""
        self.progress_at[i] = now
        stall = self._open.pop(i, None)
        if stall is not None:
            stall.ended = now

    def kpis(self) -> dict[str, Any]:
        """Stalls so far, those going on now, and the time without progress that makes one."""
        return {
            "stalls": len(self.records),
            "stalled_now": len(self._open),
            "stall_after_s": self.after_s,
        }

    @property
    def stalled(self) -> list[Stall]:
        """The stalls going on now."""
        return list(self._open.values())

    def check(self, fleet: FleetManager, now: float) -> None:
        """Note progress (closer to the place, at work) and stalls, once every
        `CHECK_EVERY_S`: array operations, Python only for the stalls that begin or end."""
        if now < self._next_check:
            return
        self._next_check = now + CHECK_EVERY_S
        t = fleet.traffic
        agents = fleet.sim.world.motion.agents
        faulted = agents["fault_scale"][agents.rows(t._motion)] == 0  # stopped by a fault
        self.progress_at[faulted] = np.minimum(now, self.progress_at[faulted] + now - self._checked)
        self._checked = now
        bound = np.flatnonzero(fleet.has_job & (self._goal >= 0) & (t.route_end == self._goal))
        if bound.size:  # the way left along the route to the place
            d = t.positions()[bound] - t.next_xy[bound]
            left = np.hypot(d[:, 0], d[:, 1]) + t.ahead_m[bound]
            closer = bound[left < self._best[bound] - CLOSER_M]
            self._best[bound] = np.minimum(self._best[bound], left)
            self.progress_at[closer] = now
        self.progress_at[fleet.work_until < np.inf] = now  # at work: progressing
        # waiting for (or riding) a lift whose cabin or doors move: progressing (one held
        # still is not: the robot waits for its holder, a stall when the holder is stuck)
        self.progress_at[t.lift_rides.progressing()] = now
        for i in [i for i in self._open if self.progress_at[i] == now]:  # moving on again
            self._open.pop(i).ended = now
        late = fleet.has_job & (now - self.progress_at >= self.after_s)
        for i in np.flatnonzero(late).tolist():
            if i in self._open:
                continue
            node = int(t.waiting_on[i])
            blocker = t.waits_for(i)
            if (
                blocker >= 0
                and blocker not in self._open
                and not faulted[blocker]
                and (now - self.progress_at[blocker] < self.after_s)
            ):
                continue  # queued behind a robot that moves on: not stalled
            job = fleet.job[i]
            waits = t.lift_rides.waits_for(i)  # a lift: its level, doors and who holds it
            closed = t.closures.waiting.get(i)
            if waits is None and closed is not None:
                waits = f"lane {t.graph.names[closed[0]]}->{t.graph.names[closed[1]]} (closed)"
            elif waits is None and node >= 0:
                how = "in the way: " if t.giving_way_to[i] == blocker else "held by "
                by = f" ({how}{fleet.robots[blocker].name})" if blocker >= 0 else ""
                waits = f"node {t.graph.names[node]}{by}"
            stall = Stall(
                float(self.progress_at[i] + self.after_s),
                fleet.robots[i].name,
                job.id if job is not None else "",
                t.graph.names[t.node_of(i)],
                waits,
                float(self.progress_at[i]),
            )
            self._open[i] = stall
            self.records.append(stall)
        for i in [i for i in self._open if not fleet.has_job[i]]:  # its task ended (failed)
            self._open.pop(i).ended = now
