"""`SafetyFields`: robots guarded by safety fields, evaluated on every scan of their scanners.

After a sensing phase, each guarded robot whose scanner scanned gets its field state from the
scan (`fleetsim.sensors.fields`): an obstacle in the protective field stops it (speed 0) until
the field has been clear for `resume_after` seconds; one in the warning field slows it to
`warning_speed` of its limits until that field has been clear as long. The factor is the agent
table's `safety_scale`, multiplied into the speed the controller drives at (`speed_scale`, with
a fleet manager's override and a fault's factor: `command_scale`). Robots of one (fields,
scanner) model are evaluated together, in array operations: a comparison per beam of a scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.sensors.fields import SafetyFieldParams, beam_intervals
from fleetsim.sensors.lidar import LidarParams
from fleetsim.sensors.lidars import LidarGroup
from fleetsim.state import AgentTable

IntArray = np.ndarray

CLEAR, WARNING, PROTECTIVE = 0, 1, 2
STATES = ("clear", "warning", "protective")
"""Field states, by number."""


@dataclass
class _Guarded:
    """The robots of one (fields, scanner) model."""

    fields: SafetyFieldParams
    lidar: LidarParams
    intervals: np.ndarray  # (sets, 2 fields, beams, 2): near and far along each beam
    sensors: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    owners: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    agents: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    state: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int8))
    muted: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    band: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # set in force
    last_hit: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))  # seen in each field
    since: np.ndarray = field(default_factory=lambda: np.empty(0))
    stops: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    seconds: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))  # in each state
    pending: list[tuple[int, int, int, float]] = field(default_factory=list)  # added, not joined

    def add(self, sensor: int, owner: int, agent: int, now: float) -> None:
        self.pending.append((sensor, owner, agent, now))  # (joined in one go: `settle`)

    def settle(self) -> None:
        """Join the robots added since (the arrays grown once for all of them)."""
        if not self.pending:
            return
        sensors, owners, agents, now = (np.array(v) for v in zip(*self.pending, strict=True))
        n = len(sensors)
        self.pending = []
        self.sensors = np.concatenate((self.sensors, sensors.astype(np.int64)))
        self.owners = np.concatenate((self.owners, owners.astype(np.int64)))
        self.agents = np.concatenate((self.agents, agents.astype(np.int64)))
        self.state = np.concatenate((self.state, np.full(n, CLEAR, dtype=np.int8)))
        self.muted = np.concatenate((self.muted, np.zeros(n, dtype=bool)))
        self.band = np.concatenate((self.band, np.zeros(n, dtype=np.int64)))
        self.last_hit = np.concatenate((self.last_hit, np.full((n, 2), -np.inf)))
        self.since = np.concatenate((self.since, now.astype(np.float64)))
        self.stops = np.concatenate((self.stops, np.zeros(n, dtype=np.int64)))
        self.seconds = np.concatenate((self.seconds, np.zeros((n, 3))))

    def keep(self, rows: np.ndarray) -> None:
        for name in (
            "sensors", "owners", "agents", "state", "muted", "band", "last_hit", "since", "stops",
            "seconds",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name)[rows])


def _intervals(fields: SafetyFieldParams, lidar: LidarParams) -> np.ndarray:
    return np.stack(
        [
            np.stack([beam_intervals(s.protective, lidar), beam_intervals(s.warning, lidar)])
            for s in fields.sets
        ]
    )


class SafetyFields:
    """The guarded robots of one simulation (`sim.safety`)."""

    def __init__(self) -> None:
        self._groups: dict[tuple[SafetyFieldParams, LidarParams], _Guarded] = {}
        self._where: dict[int, tuple[SafetyFieldParams, LidarParams]] = {}  # owner -> its group

    def __len__(self) -> int:
        return len(self._where)

    def owners(self) -> np.ndarray:
        """The body handles of the robots that have safety fields."""
        return np.fromiter(self._where, dtype=np.int64, count=len(self._where))

    def __bool__(self) -> bool:
        return bool(self._where)

    def _settled(self) -> list[_Guarded]:
        for group in self._groups.values():
            group.settle()
        return list(self._groups.values())

    def guard(
        self,
        owner: int,
        agent: int,
        sensor: int,
        lidar: LidarParams,
        fields: SafetyFieldParams,
        now: float,
    ) -> None:
        """Guard the robot (body `owner`, agent row handle `agent`) by `fields` read from its
        lidar `sensor` (of model `lidar`); replaces fields it had."""
        self.release(owner)
        key = (fields, lidar)
        if key not in self._groups:
            self._groups[key] = _Guarded(fields, lidar, _intervals(fields, lidar))
        self._groups[key].add(sensor, owner, agent, now)
        self._where[owner] = key

    def release(self, owner: int) -> None:
        """The robot is guarded no longer (no effect if it was not)."""
        key = self._where.pop(owner, None)
        if key is None:
            return
        group = self._groups[key]
        group.settle()
        group.keep(np.flatnonzero(group.owners != owner))
        if not len(group.owners):
            del self._groups[key]

    def clear(self) -> None:
        """Guard nobody."""
        self._groups.clear()
        self._where.clear()

    def mute(self, owner: int, muted: bool) -> None:
        """Turn the robot's fields off (docking, picking) or on again."""
        for group in self._settled():
            group.muted[group.owners == owner] = muted

    def state_of(self, owner: int) -> str | None:
        """The robot's field state: "clear", "warning" or "protective"; None unguarded."""
        if owner not in self._where:
            return None
        group = self._groups[self._where[owner]]
        group.settle()
        return STATES[int(group.state[np.flatnonzero(group.owners == owner)[0]])]

    def drawn_fields(self, owner: int) -> tuple[Any, Any, str] | None:
        """The robot's fields in force at its last scan (protective and warning polygons in the
        scanner's frame) and its state; None for a robot without fields."""
        for group in self._settled():
            mine = np.flatnonzero(group.owners == owner)
            if mine.size:
                k = int(mine[0])
                in_force = group.fields.sets[int(group.band[k])]
                return in_force.protective, in_force.warning, STATES[int(group.state[k])]
        return None

    def violated(self, owners: IntArray) -> np.ndarray:
        """Whether each body of `owners` (handles) has an obstacle in its protective field."""
        out = np.zeros(len(owners), dtype=bool)
        for group in self._settled():
            stopped = group.owners[group.state == PROTECTIVE]
            out |= np.isin(owners, stopped)
        return out

    def totals(self, now: float) -> dict[str, float]:
        """Protective stops since the start, and the seconds robots spent stopped and slowed
        by their fields."""
        stops, stopped, slowed = 0, 0.0, 0.0
        for g in self._settled():
            ongoing = now - g.since
            stops += int(g.stops.sum())
            stopped += float(g.seconds[:, PROTECTIVE].sum() + ongoing[g.state == PROTECTIVE].sum())
            slowed += float(g.seconds[:, WARNING].sum() + ongoing[g.state == WARNING].sum())
        return {"protective_stops": stops, "stopped_s": stopped, "slowed_s": slowed}

    def update(
        self, scanned: list[LidarGroup], agents: AgentTable, now: float
    ) -> list[tuple[int, int, int]]:
        """Field states from the scans just made; the speed factors of the robots whose state
        changed. Returns the changes: (owner handle, old state, new state)."""
        by_model = {g.params: g for g in scanned}
        changes: list[tuple[int, int, int]] = []
        for group in self._settled():
            lidars = by_model.get(group.lidar)
            if lidars is None:
                continue
            slots = np.searchsorted(lidars.ids, group.sensors)
            slots = np.minimum(slots, len(lidars.ids) - 1)
            alive = lidars.ids[slots] == group.sensors  # (a scanner removed: fields go too)
            if not alive.all():
                for owner in group.owners[~alive].tolist():
                    del self._where[owner]
                group.keep(np.flatnonzero(alive))
                slots = slots[alive]
            fresh = np.flatnonzero(lidars.stamps[slots] == now)
            if fresh.size:
                changes += self._evaluate(group, lidars, slots[fresh], fresh, agents, now)
        return changes

    def _evaluate(
        self,
        group: _Guarded,
        lidars: LidarGroup,
        slots: IntArray,
        members: IntArray,
        agents: AgentTable,
        now: float,
    ) -> list[tuple[int, int, int]]:
        rows = agents.rows(group.agents[members])
        speed = np.hypot(agents["vel"][rows, 0], agents["vel"][rows, 1])
        lows = np.array([s.min_speed for s in group.fields.sets])
        in_force = np.searchsorted(lows, speed, side="right") - 1
        group.band[members] = in_force
        ranges = lidars.ranges[slots]
        ranges = np.where(np.isneginf(ranges), 0.0, ranges)  # (nearer than it measures)
        hit = np.zeros((len(members), 2), dtype=bool)  # protective, warning
        for k in np.unique(in_force).tolist():  # (a few speed bands: no gathered bounds)
            band = in_force == k
            near, far = group.intervals[k, :, :, 0], group.intervals[k, :, :, 1]  # (2, beams)
            r = ranges[band][:, None, :]
            hit[band] = ((r >= near) & (r <= far)).any(axis=2)
        hit &= ~group.muted[members, None]
        old = group.state[members]
        last = group.last_hit[members]
        last[hit] = now
        last[hit[:, 0], 1] = now  # (an obstacle in the protective field is in the warning one)
        group.last_hit[members] = last
        recent = now - last < group.fields.resume_after - 1e-9  # (m, 2): each field held
        recent |= hit
        new = np.where(recent[:, 0], PROTECTIVE, np.where(recent[:, 1], WARNING, CLEAR))
        new = new.astype(np.int8)
        moved = np.flatnonzero(new != old)
        if not moved.size:
            return []
        who = members[moved]
        group.seconds[who, old[moved]] += now - group.since[who]
        group.since[who] = now
        group.stops[who] += new[moved] == PROTECTIVE
        group.state[who] = new[moved]
        scale = np.array([1.0, group.fields.warning_speed, 0.0])[new[moved]]
        changed_rows = rows[moved]
        agents["safety_scale"][changed_rows] = scale
        agents["speed_scale"][changed_rows] = agents["command_scale"][changed_rows] * scale
        return list(
            zip(
                group.owners[who].tolist(),
                old[moved].tolist(),
                new[moved].tolist(),
                strict=True,
            )
        )
