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
        self._reach = bodies.footprint_radii(rows) + MARGIN_M
        self._brake = np.maximum([r.spawn_params.max_linear_accel for r in robots], 1e-6)
        self._motion = np.array([r.motion_handle for r in robots], dtype=np.int64)
        self._ends = np.array([d.ends for d in self.doors], dtype=float).reshape(-1, 2, 2)
        self._elevation = np.array([d.elevation for d in self.doors], dtype=float)

    def step(self, xy: np.ndarray, z: np.ndarray, running: np.ndarray) -> None:
        """Hold robots about to meet a door that is not open; let held robots go on once it
        is; note stalls. Array operations over the robots and doors; Python only for the
        robots held or let go."""
        if not self.doors:
            return
        now = self.sim.sim_time
        for k, (name, since) in list(self.held.items()):
            door = self.sim.doors[name]
            if door.mode.value == "open" or not running[k]:
                self.forget(k)
            elif now - since >= self.stall_after_s and k not in self._open:
                stall = DoorStall(since + self.stall_after_s, self.robots[k].name, name, since)
                self._open[k] = stall
                self.stalls.append(stall)
        closed = np.array([d.mode.value != "open" for d in self.doors])
        if not closed.any():
            return
        agents = self.sim.world.motion.agents
        vel = agents["vel"][agents.rows(self._motion), :2]
        speed = np.hypot(vel[:, 0], vel[:, 1])
        free = running & (speed > 1e-3)
        free[list(self.held)] = False
        ks = np.flatnonzero(free)
        if not ks.size:
            return
        v = speed[ks]
        ahead = v * v / (2 * self._brake[ks]) + self._reach[ks] + 2 * v * self.sim.params.timestep
        p = xy[ks]
        q = p + vel[ks] / v[:, None] * ahead[:, None]
        hits = _crosses(p, q, self._ends[:, 0], self._ends[:, 1])  # (robots, doors)
        hits &= closed & (np.abs(self._elevation[None, :] - z[ks, None]) <= LEVEL_M)
        for row in np.flatnonzero(hits.any(axis=1)).tolist():
            k, door = int(ks[row]), self.doors[int(np.argmax(hits[row]))]
            self.robots[k].hold()
            self.held[k] = (door.name, now)

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


def _crosses(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which segments p-q (N, 2) meet which segments a-b (D, 2): (N, D) bool."""

    def side(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        out: np.ndarray = (v[..., 0] - u[..., 0]) * (w[..., 1] - u[..., 1]) - (
            v[..., 1] - u[..., 1]
        ) * (w[..., 0] - u[..., 0])
        return out

    pn, qn, ad, bd = p[:, None], q[:, None], a[None, :], b[None, :]
    d1, d2 = side(ad, bd, pn), side(ad, bd, qn)
    d3, d4 = side(pn, qn, ad), side(pn, qn, bd)
    touching = (d1 == 0) & (d2 == 0) & (d3 == 0) & (d4 == 0)
    crosses: np.ndarray = (d1 * d2 <= 0) & (d3 * d4 <= 0) & ~touching
    return crosses
