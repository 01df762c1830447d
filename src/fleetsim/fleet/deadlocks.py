"""Deadlocks in traffic control: robots waiting on each other in a cycle (A waits for B, B for
A), found from the wait-for graph every check period and undone when the site allows: one
robot routed round the others, or stepped aside to a free neighbour, or (last resort) given
another goal by the fleet manager. Each is recorded, resolved or not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.errors import FleetSimError

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

DETOUR_NEAR_LANES = 4  # a detour goes round robots within about this many lanes


@dataclass(frozen=True)
class Deadlock:
    """Robots waiting on each other in a cycle, when it was found and whether it was undone."""

    time: float
    robots: tuple[str, ...]
    nodes: tuple[str, ...]  # the node each robot waits for
    resolved: bool


def find_deadlocks(t: TrafficControl) -> None:
    """Look at who waits for whom: a robot held up by an idle one is routed round it (or
    listed in `t.blocked_by_idle`); each new wait-for cycle is undone if it can be and
    recorded in `t.deadlocks`."""
    waits = {
        i: t.blocker(i, int(t.waiting_on[i])) for i in np.flatnonzero(t.waiting_on >= 0).tolist()
    }
    t.blocked_by_idle = []
    for i, j in list(waits.items()):
        if j >= 0 and not t.active[j]:  # an idle robot in the way: go around it
            if reroute(t, i, avoid=t.held(j)):
                t.detours += 1
                waits.pop(i)
            else:
                t.blocked_by_idle.append((i, j))
    # Each waiting robot waits on one other, so cycles are found by walking each chain
    # once: a walk stops at a robot an earlier walk passed (no new cycle there).
    current: set[frozenset[int]] = set()
    walk_of: dict[int, int] = {}
    for walk, start in enumerate(waits):
        chain, j = [], start
        while j in waits and waits[j] >= 0 and j not in walk_of:
            walk_of[j] = walk
            chain.append(j)
            j = waits[j]
        if walk_of.get(j) != walk:  # the chain ended, or ran into an earlier walk
            continue
        members = chain[chain.index(j) :]
        key = frozenset(members)
        current.add(key)
        if key not in t.cycles:  # new (recorded once)
            _resolve(t, members)
    t.cycles = current


def _resolve(t: TrafficControl, members: list[int]) -> None:
    """Route one robot of the cycle around the node it waits for; failing that, send one
    to a free neighbouring node off the others' routes (it carries on from there)."""
    wanted = [int(t.waiting_on[i]) for i in members]
    taken = np.flatnonzero(t.owner >= 0)
    holder = t.owner[taken]
    near_m = DETOUR_NEAR_LANES * float(np.median(t.graph.lane_length)) + t.clearance

    def nearby(i: int) -> list[int]:
        """Nodes other robots hold near robot i, and the cycle's other routes ahead."""
        here = t.graph.xy[t.routes[i][int(t.head[i])]]
        close = np.hypot(*(t.graph.xy[taken] - here).T) < near_m
        around: list[int] = taken[close & (holder != i)].tolist()
        return around + [n for j in members if j != i for n in t.route_ahead(j)]

    def cycle_nodes(i: int) -> list[int]:
        """Only the nodes the cycle's other robots hold."""
        return [n for j in members if j != i for n in t.held(j)]

    # Best: round the robots near it and the cycle's routes (not meeting them again); else
    # round the cycle's robots only; else one robot steps aside to a free neighbour.
    resolved = (
        any(reroute(t, i, nearby(i)) for i in members)
        or any(reroute(t, i, cycle_nodes(i)) for i in members)
        or any(_retreat(t, i, members) for i in members)
        or (t.on_deadlock is not None and t.on_deadlock(members))
    )
    t.deadlocks.append(
        Deadlock(
            t.sim.sim_time,
            tuple(t.robots[i].name for i in members),
            tuple(t.graph.names[n] for n in wanted),
            resolved,
        )
    )


def reroute(t: TrafficControl, i: int, avoid: Sequence[int]) -> bool:
    """Send robot i on to its goal round the node it waits for and `avoid`, if a way round
    is near; returns whether it was."""
    blocked = {int(t.waiting_on[i]), *avoid}
    goal = t.routes[i][-1]
    if goal in blocked:
        return False
    # A way round is near or not worth it: search a few times the route's own length.
    limit = 8 * (len(t.routes[i]) - int(t.head[i])) + 64
    try:
        t.send(i, goal, avoid=sorted(blocked), max_expansions=limit)
    except FleetSimError:
        return False
    return True


def _retreat(t: TrafficControl, i: int, members: list[int]) -> bool:
    """Step robot i aside to a free neighbouring node off the cycle's routes; it carries on
    to its goal from there."""
    head = t.routes[i][int(t.head[i])]
    in_use = {n for j in members if j != i for n in t.routes[j][int(t.tail[j]) :]}
    in_use |= {int(t.waiting_on[j]) for j in members}
    g = t.graph
    for e in range(g._start[head], g._start[head + 1]):
        side = int(g._to[e])
        if side not in in_use and t.blocker(i, side) < 0:
            goal = t.routes[i][-1]
            t.send(i, side)
            t.stepping_aside[i] = goal
            return True
    return False
