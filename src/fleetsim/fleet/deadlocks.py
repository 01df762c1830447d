"""Deadlocks in traffic control: robots waiting on each other in a cycle (A waits for B, B for
A), found from the wait-for graph every check period and undone when the site allows: a robot
with nothing to do takes another parking spot (the fleet manager's `on_deadlock`), or one robot
is routed round the others, or steps aside to a free neighbour.

Each deadlock is an episode: the same robots in a cycle again, at a later check, is the same
episode come back, not a new one, and undoing it is tried again, harder (stepping aside before
routing round). An episode is resolved only once every robot of it has passed a node since it
was last found: a deadlock that keeps coming back, or one whose robots stand still, stays
unresolved, however often a way out was tried."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.errors import FleetSimError

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

DETOUR_NEAR_LANES = 4  # a detour goes round robots within about this many lanes
ONTO_ROUTES_TRIES = 2  # an episode's robots may step aside onto each other's routes this often


@dataclass
class Deadlock:
    """A deadlock episode: robots waiting on each other in a cycle, when it was first and
    last found, how often it was found (it came back), and whether it is resolved (every
    robot of it passed a node since it was last found)."""

    time: float
    robots: tuple[str, ...]
    nodes: tuple[str, ...]  # the node each robot waited for, when last found
    resolved: bool = False
    detections: int = 1  # times it appeared: first found, then each time it came back
    last_seen: float = 0.0
    resolved_at: float | None = None
    members: tuple[int, ...] = field(default=(), repr=False)  # robot indices
    passed: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64), repr=False)


def find_deadlocks(t: TrafficControl) -> None:
    """Look at who waits for whom: a robot held up by an idle one is routed round it (or
    listed in `t.blocked_by_idle`); each wait-for cycle is an episode (new, or come back, or
    still there), undone if it can be and recorded in `t.deadlocks`; episodes whose robots all
    moved on are marked resolved."""
    now = t.sim.sim_time
    waits = {i: t.waits_for(i) for i in np.flatnonzero(t.waiting_on >= 0).tolist()}
    t.blocked_by_idle = []
    for i, j in list(waits.items()):
        if j >= 0 and not t.active[j]:  # an idle robot in the way: go around it
            if reroute(t, i, avoid=t.held(j)):
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
        episode = t.episodes.get(key)
        wanted = tuple(t.graph.names[int(t.waiting_on[i])] for i in members)
        if episode is None:
            episode = Deadlock(
                now,
                tuple(t.robots[i].name for i in members),
                wanted,
                last_seen=now,
                members=tuple(members),
            )
            t.episodes[key] = episode
            t.deadlocks.append(episode)
        elif key not in t.cycles or episode.resolved:  # it came back
            episode.detections += 1
        episode.resolved, episode.resolved_at = False, None
        episode.last_seen, episode.nodes = now, wanted
        episode.passed = t.passed[list(episode.members)].copy()
        _resolve(
            t,
            members,
            harder=episode.detections > 1 or key in t.cycles,
            onto_routes=episode.detections <= ONTO_ROUTES_TRIES,
        )
    t.cycles = current
    for key, episode in t.episodes.items():
        if not episode.resolved and key not in current:
            moved = t.passed[list(episode.members)] > episode.passed
            if moved.all():
                episode.resolved, episode.resolved_at = True, now


def _resolve(
    t: TrafficControl, members: list[int], harder: bool = False, onto_routes: bool = True
) -> bool:
    """Undo a cycle: a robot holding a lift it has not boarded, that another robot of the
    cycle waits for, gives the lift up (`LiftPassage.give_up`); else a robot of it with
    nothing to do goes elsewhere (the fleet manager's `on_deadlock`); else one robot is routed
    round the node it waits for; failing that, one steps aside to a free node near it off the
    others' routes (it carries on from there). `harder` (the cycle came back, or is still
    there): stepping aside first; `onto_routes`: stepping aside may be onto another robot's
    route (not once that failed `ONTO_ROUTES_TRIES` times: in a dead-end corridor it only
    moves the robots to and fro)."""
    taken = np.flatnonzero(t.owner >= 0)
    holder = t.owner[taken]
    near_m = DETOUR_NEAR_LANES * t.graph.typical_lane_length + t.clearance

    def nearby(i: int) -> list[int]:
        """Nodes other robots hold near robot i, and the cycle's other routes ahead."""
        here = t.graph.xy[t.routes[i][int(t.head[i])]]
        close = np.hypot(*(t.graph.xy[taken] - here).T) < near_m
        around: list[int] = taken[close & (holder != i)].tolist()
        return around + [n for j in members if j != i for n in t.route_ahead(j)]

    def cycle_nodes(i: int) -> list[int]:
        """Only the nodes the cycle's other robots hold."""
        return [n for j in members if j != i for n in t.held(j)]

    def elsewhere() -> bool:
        return t.on_deadlock is not None and t.on_deadlock(members)

    def round_nearby() -> bool:
        return any(reroute(t, i, nearby(i)) for i in members)

    def round_cycle() -> bool:
        return any(reroute(t, i, cycle_nodes(i)) for i in members)

    def aside() -> bool:
        return any(_retreat(t, i, members, onto_routes) for i in members)

    def lift_given_up() -> bool:
        return any(t.lift_rides.give_up(i, members) for i in members)

    ways = (
        (lift_given_up, elsewhere, aside, round_cycle)
        if harder
        else (lift_given_up, elsewhere, round_nearby, round_cycle, aside)
    )
    return any(way() for way in ways)


def reroute(t: TrafficControl, i: int, avoid: Sequence[int]) -> bool:
    """Send robot i on to its goal round the node it waits for and `avoid`, if a way round
    is near; returns whether it was."""
    here = t.routes[i][int(t.head[i])]
    # round robots standing idle too (no way through them: they may never move)
    blocked = ({int(t.waiting_on[i]), *avoid} | t.idle_nodes()) - {here}
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


def _retreat(t: TrafficControl, i: int, members: list[int], onto_routes: bool = True) -> bool:
    """Step robot i aside to a free node near it; it carries on to its goal from there. Off
    the cycle's routes if it can (up to `DETOUR_NEAR_LANES` lanes back, through free nodes: in a
    corridor the nearest node off the others' way may be a few lanes off), else (a one-way lane
    leaves no other way) onto a neighbouring node further along another's route, which it then
    leads. A robot standing on a node lets go of the nodes it holds ahead first (it steps aside
    from where it is, not from beyond the node another robot needs); it never steps through or
    onto a node another robot of the cycle waits for, nor into a lift's shaft."""
    others_want = {int(t.waiting_on[j]) for j in members if j != i}
    routes = {n for j in members if j != i for n in t.routes[j][int(t.tail[j]) :]}
    goal = t.routes[i][-1]
    ahead = set(t.route_ahead(i)[1:]) - {t.node_of(i)}
    head = t.routes[i][int(t.head[i])]
    passes = ((routes | others_want, DETOUR_NEAR_LANES), (others_want, 1))
    for avoid, hops in passes[: 2 if onto_routes else 1]:
        for start in dict.fromkeys((t.standing_on(i), head)):
            if start < 0 or (start == head and ahead & others_want):
                continue
            side = _aside(t, i, start, avoid, others_want, ahead if start != head else set(), hops)
            if side < 0:
                continue
            if start != head:
                t.let_go_ahead(i)  # from the node it stands on
            t.send(i, side)
            t.stepping_aside[i] = goal
            return True
    return False


def _aside(
    t: TrafficControl,
    i: int,
    start: int,
    avoid: set[int],
    others_want: set[int],
    ahead: set[int],
    hops: int,
) -> int:
    """The nearest node from `start` not in `avoid`, up to `hops` lanes away through free
    nodes no other robot of the cycle waits for (the first lane not into `ahead`; never a
    lift's node: the cabin may be away), or -1."""
    seen, frontier = {start}, [start]
    for hop in range(hops):
        nearer: list[int] = []
        for node in frontier:
            for side in t.graph.successors(node):
                if side in seen:
                    continue
                seen.add(side)
                if side in others_want or side in t.lift_rides.stops:
                    continue
                if (hop == 0 and side in ahead) or t.blocker(i, side) >= 0:
                    continue
                if side not in avoid:
                    return int(side)
                nearer.append(side)
        frontier = nearer
    return -1
