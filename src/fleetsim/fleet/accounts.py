"""What a fleet's robots did: `RobotAccounts` (the state each robot is in, the time it spent in
each, the distance it drove) and `CollisionLog` (when, where and between what each collision
began). Both are kept step by step as array operations; the KPIs and tables read them."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.collision.kinds import pair_kinds
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.fleet.states import STATES, RobotState


class RobotAccounts:
    """Per robot: `state` now (a `RobotState` index), `time_in_state` (R, states) in seconds
    and `distance` driven in metres."""

    def __init__(self, xy: np.ndarray) -> None:
        r = len(xy)
        self.state = np.zeros(r, dtype=np.int64)
        self.time_in_state = np.zeros((r, len(RobotState)))
        self._time_flat = self.time_in_state.reshape(-1)  # (a view: one gather-add a step)
        self._state_base = np.arange(r) * len(RobotState)
        self.distance = np.zeros(r)
        self._last_xy = xy.copy()

    def account(self, dt: float, xy: np.ndarray, state: np.ndarray) -> np.ndarray:
        """The step that just ended, `dt` long, left the robots at `xy` (R, 2) in `state`;
        returns the distance each drove in it."""
        self.state = state
        self._time_flat[self._state_base + state] += dt  # time_in_state[robot, state]
        d = xy - self._last_xy
        driven: np.ndarray = np.hypot(d[:, 0], d[:, 1])
        self.distance += driven
        self._last_xy = xy
        return driven

    def kpis(self) -> dict[str, Any]:
        """Waiting time, distance (in all and per robot), utilisation (the share of robot time
        not idle) and the time in each state, summed over the robots."""
        total = self.time_in_state.sum(axis=1)
        busy = total - self.time_in_state[:, RobotState.IDLE]
        robots = len(self.distance)
        return {
            "waiting_time_s": float(self.time_in_state[:, RobotState.WAITING].sum()),
            "distance_m": float(self.distance.sum()),
            "distance_per_robot_m": float(self.distance.mean()) if robots else 0.0,
            "utilisation": float(busy.sum() / total.sum()) if total.sum() > 0 else 0.0,
            "time_in_state_s": dict(
                zip(STATES, self.time_in_state.sum(axis=0).tolist(), strict=True)
            ),
        }

    def counts(self) -> dict[str, int]:
        """Robots in each state now, as `robots_<state>`."""
        counts = np.bincount(self.state, minlength=len(STATES))
        return {f"robots_{name}": int(n) for name, n in zip(STATES, counts, strict=True)}

    def row(self, i: int) -> dict[str, Any]:
        """Robot i's state, distance and time in each state."""
        times = dict(zip(STATES, self.time_in_state[i].tolist(), strict=True))
        return {
            "state": STATES[int(self.state[i])],
            "distance_m": float(self.distance[i]),
            **{f"{name}_s": t for name, t in times.items()},
        }


class CollisionLog:
    """Every collision that began in the simulation, as a row: time, kind, the two bodies and
    the place between them (a fleet manager's robots only see these in a bad run)."""

    def __init__(self, sim: MultiRobotSimulationCore) -> None:
        self.sim = sim
        self.records: list[dict[str, Any]] = []
        sim.on("collision_started", self._started)

    def _started(self, a: Any, b: Any) -> None:
        if a is None or b is None:
            return
        bodies = self.sim.world.bodies
        try:
            rows = bodies.rows([a.handle, b.handle])
        except (KeyError, IndexError, ValueError):
            return  # removed in the same step
        (kind,) = pair_kinds(bodies, rows[:1], rows[1:])
        x, y = bodies["pos"][rows, :2].mean(axis=0).tolist()
        self.records.append(
            {"time": self.sim.sim_time, "kind": kind, "a": a.name, "b": b.name, "x": x, "y": y}
        )
