"""Robots driven over Open-RMF's fleet-manager API stop short of a door that is not open.

RMF's fleet adapter opens doors itself (door requests) before its robots drive through them;
`fleetsim rmf --doors requests` exists to catch an adapter that forgets. So a robot whose way
ahead (its stopping distance, its footprint and a margin, along the way it drives) crosses a
door of its level that is not fully open is held there (it keeps its command), and drives on
once the door is open. A robot held longer than the stall time is a stall naming the door
(`stalls`); its status says `replan`, as for any robot that makes no progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MARGIN_M = 0.15  # kept between a robot's footprint and a closed door
LEVEL_M = 0.5  # a door is on a robot's level within this height


@dataclass
class DoorStall:
    """A robot held at a door that did not open: from `since`, a stall from `time`."""

    time: float
    robot: str
    door: str
    since: float
    ended: float | None = None


class DoorGuard:
    """Holds RMF robots at doors that are not open (`step` after every step)."""

    def __init__(self, sim: Any, robots: list[Any], stall_after_s: float) -> None:
        self.sim, self.robots = sim, robots
        self.stall_after_s = stall_after_s
        doors = sim.doors
        self.doors = list(doors.doors.values()) if doors is not None else []
        self.held: dict[int, tuple[str, float]] = {}  # robot -> (door, since)
        self.stalls: list[DoorStall] = []
        self._open: dict[int, DoorStall] = {}
        bodies = sim.world.bodies
        rows = bodies.rows(sim.handles_of(robots))
        half = (bodies["aabb_local_max"][rows] - bodies["aabb_local_min"][rows])[:, :2] / 2
        self._reach = np.hypot(half[:, 0], half[:, 1]) + MARGIN_M
        self._brake = np.array([r.spawn_params.max_linear_accel for r in robots], dtype=float)

    def step(self, xy: np.ndarray, z: np.ndarray, running: np.ndarray) -> None:
        """Hold robots about to meet a door that is not open; let held robots go on once it
        is; note stalls."""
        if not self.doors:
            return
        now = self.sim.sim_time
        for k, (name, since) in list(self.held.items()):
            door = self.sim.doors[name]
            if door.mode.value == "open" or not running[k]:
                self.robots[k].release()
                self.held.pop(k)
                stall = self._open.pop(k, None)
                if stall is not None:
                    stall.ended = now
            elif now - since >= self.stall_after_s and k not in self._open:
                stall = DoorStall(since + self.stall_after_s, self.robots[k].name, name, since)
                self._open[k] = stall
                self.stalls.append(stall)
        for k in np.flatnonzero(running).tolist():
            if k in self.held:
                continue
            (vx, vy, _), _ = self.robots[k].get_velocity()
            speed = float(np.hypot(vx, vy))
            if speed < 1e-3:
                continue
            ahead = speed * speed / (2 * max(self._brake[k], 1e-6)) + self._reach[k]
            ahead += 2 * speed * self.sim.params.timestep
            end = xy[k] + np.array([vx, vy]) / speed * ahead
            for door in self.doors:
                if door.mode.value == "open" or abs(door.elevation - z[k]) > LEVEL_M:
                    continue
                if _crosses(xy[k], end, door.ends[0], door.ends[1]):
                    self.robots[k].hold()
                    self.held[k] = (door.name, now)
                    break

    def forget(self, k: int) -> None:
        """Robot k has a new command: held or not, it is looked at afresh."""
        if self.held.pop(k, None) is not None:
            self.robots[k].release()
            stall = self._open.pop(k, None)
            if stall is not None:
                stall.ended = self.sim.sim_time

    def waiting_at(self, k: int) -> str | None:
        """The door robot k is held at, if any."""
        held = self.held.get(k)
        return held[0] if held is not None else None


def _crosses(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether segments p-q and a-b meet."""

    def side(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> float:
        return float((v[0] - u[0]) * (w[1] - u[1]) - (v[1] - u[1]) * (w[0] - u[0]))

    d1, d2 = side(a, b, p), side(a, b, q)
    d3, d4 = side(p, q, a), side(p, q, b)
    return d1 * d2 <= 0 and d3 * d4 <= 0 and (d1, d2, d3, d4) != (0, 0, 0, 0)
