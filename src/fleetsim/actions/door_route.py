"""The doors on a `GoTo` route: each is asked to open before the robot gets there, the robot
stops short of one that is not open yet and goes on once it is, and lets each go once past
it (or when the action ends)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.devices.doors import crossing_point
from fleetsim.objects import SiteDoors

if TYPE_CHECKING:
    from fleetsim.agents import Agent
    from fleetsim.site import NavGraph

PAST_M = 0.8  # past the door by this (a robot's length and some): it is let go


@dataclass
class _Crossing:
    near: int  # route index of the node before the door
    door: str
    point: tuple[float, float]
    heading: tuple[float, float]
    held: bool = False


class DoorsOnRoute:
    """The doors a route crosses: asked to open ahead of the robot, held while it passes, let go
    once it is past."""

    def __init__(self, agent: Agent, graph: NavGraph, nodes: list[int]) -> None:
        self.doors: SiteDoors | None = agent.world.doors
        self.requester = f"robot:{agent.name}"
        self.crossings: list[_Crossing] = []
        self.driven = 0  # route index of the last node of the path given so far
        if self.doors is None or len(nodes) < 2:
            return
        lanes = self.doors.crossings_of(graph)
        for k, lane in enumerate(graph.legs(nodes).tolist()):
            door = lanes.get(int(lane))
            if door is None:
                continue
            a, b = graph.xy[nodes[k]], graph.xy[nodes[k + 1]]
            ends = self.doors[door].ends
            point = crossing_point(a, b, ends[0], ends[1])
            d = (b - a) / (float(np.hypot(*(b - a))) or 1.0)
            self.crossings.append(
                _Crossing(k, door, (float(point[0]), float(point[1])), (float(d[0]), float(d[1])))
            )

    def _request(self, door: str, open_: bool) -> None:
        if self.doors is not None:  # (there are crossings only when there are doors)
            self.doors.request(door, self.requester, open_)

    def _is_open(self, door: str) -> bool:
        return self.doors is None or bool(self.doors.is_open(door))

    def stop_before(self) -> int | None:
        """Ask the doors ahead to open; the route index to stop at before the first that is
        not open yet (None: drive to the end)."""
        for c in self.crossings:
            if c.near < self.driven:
                continue
            if not c.held:
                self._request(c.door, True)
                c.held = True
            if not self._is_open(c.door):
                return c.near
        return None

    def open_ahead(self) -> bool:
        """At a stop: whether the door in front is open now."""
        ahead = next((c for c in self.crossings if c.near == self.driven), None)
        return ahead is None or self._is_open(ahead.door)

    def let_go_passed(self, agent: Agent) -> None:
        """Let go of the doors the agent is now `PAST_M` beyond."""
        x, y = agent.get_pose().position[:2]
        for c in self.crossings:
            if (
                c.held
                and (x - c.point[0]) * c.heading[0] + (y - c.point[1]) * c.heading[1] > PAST_M
            ):
                self._request(c.door, False)
                c.held = False

    def let_go_all(self) -> None:
        """Let go of every door still held (the route ended or was cancelled)."""
        for c in self.crossings:
            if c.held:
                self._request(c.door, False)
                c.held = False
