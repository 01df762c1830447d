"""Robots through doors, for traffic control: a door ahead is asked to open, the robot waits
short of it until it is fully open, holds it while it passes, and lets it go once clear on
the far side (or when its route changes before it got there); the door closes when nobody
holds it. Waits at doors are counted (episodes and seconds)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.devices.doors import crossing_point

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

CLEAR_M = 0.3  # past the door by the robot's radius and this: it no longer needs the door


@dataclass
class _Hold:
    door: str
    point: tuple[float, float]  # where the route crosses the door
    heading: tuple[float, float]  # unit direction of travel through it


class DoorPassage:
    """The doors the fleet's robots hold and wait for."""

    def __init__(self, traffic: TrafficControl) -> None:
        self.t = traffic
        self.doors: Any = traffic.sim.doors
        self.lanes: dict[int, str] = self.doors.crossings_of(traffic.graph) if self.doors else {}
        self.holds: dict[int, list[_Hold]] = {}
        self.waiting: dict[str, set[int]] = {}  # door -> robots waiting for it to open
        self._since: dict[int, float] = {}  # robot -> when it began to wait
        self.waits = 0  # episodes of a robot waiting at a door
        self.wait_s = 0.0
        if self.lanes:
            traffic.sim.on("door_changed", self._changed)

    def _requester(self, i: int) -> str:
        return f"robot:{self.t.robots[i].name}"

    def clear(self, i: int, nodes: list[int]) -> bool:
        """Whether robot i may take `nodes` (its next stretch, from the node it holds last):
        every door on the way is open; a closed one is asked to open and the robot waits."""
        if not self.lanes:
            return True
        graph = self.t.graph
        for a, b in itertools.pairwise(nodes):
            door = self.lanes.get(int(graph.legs([a, b])[0]))
            if door is None:
                continue
            self._hold(i, door, a, b)
            if not self.doors.is_open(door):
                self.waiting.setdefault(door, set()).add(i)
                if i not in self._since:
                    self._since[i] = self.t.sim.sim_time
                    self.waits += 1
                self.t._asleep[i] = True  # until the door is open
                return False
        return True

    def _hold(self, i: int, door: str, a: int, b: int) -> None:
        held = self.holds.setdefault(i, [])
        xy = self.t.graph.xy
        d = xy[b] - xy[a]
        norm = float(np.hypot(*d)) or 1.0
        heading = (float(d[0]) / norm, float(d[1]) / norm)
        if any(h.door == door and h.heading == heading for h in held):
            return  # (a route through it and back holds it both ways)
        ends = self.doors[door].ends
        point = crossing_point(xy[a], xy[b], ends[0], ends[1])
        held.append(_Hold(door, (float(point[0]), float(point[1])), heading))
        self.doors.request(door, self._requester(i), True)

    def _changed(self, door: str, mode: str, _time: float) -> None:
        if mode != "open":
            return
        now = self.t.sim.sim_time
        for i in self.waiting.pop(door, set()):
            self.wait_s += now - self._since.pop(i, now)
            self.t._asleep[i] = False

    def step(self, positions: np.ndarray) -> None:
        """Let go of the doors robots have passed (positions: all robots' (R, 2))."""
        clear = self.t.radius + CLEAR_M
        for i in list(self.holds):
            self._let_go(i, positions[i], lambda along: along > clear)

    def rerouted(self, i: int, position: np.ndarray, kept: list[int]) -> None:
        """Robot i has a new route, which keeps the nodes `kept` it holds: it lets go of the
        doors it is not in and will not pass on those nodes."""
        graph = self.t.graph
        keep = (
            {self.lanes.get(int(lane)) for lane in graph.legs(kept).tolist()}
            if len(kept) > 1
            else set()
        )
        far = self.t.radius + CLEAR_M
        held = self.holds.get(i, [])
        for hold in list(held):
            along = (float(position[0]) - hold.point[0]) * hold.heading[0] + (
                float(position[1]) - hold.point[1]
            ) * hold.heading[1]
            if hold.door not in keep and abs(along) > far:
                held.remove(hold)
                self._drop(i, hold.door, held)
        if not held:
            self.holds.pop(i, None)
        for waiting in self.waiting.values():
            waiting.discard(i)
        self._since.pop(i, None)

    def _let_go(self, i: int, position: np.ndarray, done: Callable[[float], bool]) -> None:
        """Let go of robot i's doors for which `done(how far past the door it is)`."""
        px, py = float(position[0]), float(position[1])
        held = self.holds.get(i, [])
        for hold in list(held):
            along = (px - hold.point[0]) * hold.heading[0] + (py - hold.point[1]) * hold.heading[1]
            if done(along):
                held.remove(hold)
                self._drop(i, hold.door, held)
        if not held:
            self.holds.pop(i, None)

    def _drop(self, i: int, door: str, held: list[_Hold]) -> None:
        """Robot i no longer wants `door` open, unless it still passes it another way."""
        if not any(h.door == door for h in held):
            self.doors.request(door, self._requester(i), False)

    def kpis(self) -> dict[str, Any]:
        """Door waits and wait time; the doors' openings and open time."""
        out: dict[str, Any] = {"door_waits": self.waits, "door_wait_s": round(self.wait_s, 3)}
        if self.doors is not None:
            out.update(self.doors.kpis())
        return out
