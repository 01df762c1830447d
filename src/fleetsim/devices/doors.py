"""A building's doors as devices: closed, opening, open, closing.

Each door is a thin static box across its opening, on its level, while it is not fully open
(a closed door is a wall for collisions); fully open, the box takes no part in collisions.
Who wants a door open says so by name (`request(door, requester, open)`: a robot of the fleet
manager, an outside system over HTTP, a script); a door opens while anyone wants it open and
closes when nobody does, as RMF's door supervisor merges requests. Opening and closing take
the door's move time (by type, unless set). Every change of mode is a "door_changed" event
(door, mode, time) for recordings and the live view; `kpis()` gives each door's open time and
cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.errors import ConfigError, named
from fleetsim.objects import SimObject
from fleetsim.state import CollisionMode

if TYPE_CHECKING:
    from fleetsim.devices.host import DeviceHost
    from fleetsim.site import NavGraph, Site

MOVE_S = {"sliding": 2.0, "double_sliding": 2.0, "hinged": 3.0, "double_hinged": 3.0}
DEFAULT_MOVE_S = 3.0  # a door type the table does not know
HEIGHT_M = 2.2
THICKNESS_M = 0.08


class DoorMode(str, Enum):
    """A door's mode: closed, opening, open or closing (the values RMF's door states use)."""

    CLOSED = "closed"
    OPENING = "opening"
    OPEN = "open"
    CLOSING = "closing"


@dataclass
class DoorDevice:
    """One door: where it is, how long it takes to move, its mode and how far open it is
    (0 closed .. 1 open), who wants it open, and its totals."""

    name: str
    level: str
    kind: str
    ends: np.ndarray  # (2, 2) m
    elevation: float
    move_s: float
    mode: DoorMode = DoorMode.CLOSED
    opened: float = 0.0
    wanted_by: set[str] = field(default_factory=set)
    open_s: float = 0.0  # time not closed, up to `open_since`
    open_since: float | None = None  # when it last left CLOSED (None: closed now)
    cycles: int = 0  # times it began to open
    body: Any = None  # its SimObject
    stuck: bool | None = None  # a fault: stuck open (True) or closed (False)

    def state(self) -> dict[str, Any]:
        """Name, level, mode, how far open (0-1) and who wants it open."""
        return {
            "name": self.name,
            "level": self.level,
            "mode": self.mode.value,
            "opened": round(self.opened, 3),
            "wanted_by": sorted(self.wanted_by),
        }


class Doors:
    """The doors of a simulation's site (`sim.doors`)."""

    def __init__(self, sim: DeviceHost, site: Site) -> None:
        self.sim = sim
        self.doors: dict[str, DoorDevice] = {}
        for door in site.doors:
            if door.name in self.doors:
                raise ConfigError(f"two doors are named '{door.name}': door names must be unique")
            elevation = site.elevation(door.level)
            move_s = MOVE_S.get(door.kind, DEFAULT_MOVE_S)
            ends = np.asarray(door.ends, float)
            self.doors[door.name] = DoorDevice(
                door.name, door.level, door.kind, ends, elevation, move_s
            )
        devices = list(self.doors.values())
        if devices:
            a = np.array([d.ends[0] for d in devices])
            b = np.array([d.ends[1] for d in devices])
            length = np.maximum(np.hypot(*(b - a).T), 1e-3)
            centres = np.column_stack(((a + b) / 2, [d.elevation + HEIGHT_M / 2 for d in devices]))
            halves = np.column_stack(
                (length / 2, np.full(len(a), THICKNESS_M / 2), np.full(len(a), HEIGHT_M / 2))
            )
            yaws = np.arctan2(b[:, 1] - a[:, 1], b[:, 0] - a[:, 0])
            bodies = SimObject.static_boxes(centres, halves, yaws, sim_core=sim)
            for device, body in zip(devices, bodies, strict=True):
                device.body = body
                body.name = f"door:{device.name}"
        self._static, self._disabled = CollisionMode.STATIC, CollisionMode.DISABLED
        self._moving: set[str] = set()
        self._crossings: dict[int, tuple[NavGraph, dict[int, str]]] = {}
        self._callback = sim.register_callback(lambda *_: self.step(), owner=self)

    # -- commands ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.doors)

    def __getitem__(self, name: str) -> DoorDevice:
        return named(self.doors, name, "door")

    def request(self, name: str, requester: str, open: bool) -> DoorDevice:
        """`requester` wants door `name` open (or no longer wants it open)."""
        door = self[name]
        if open:
            door.wanted_by.add(str(requester))
        else:
            door.wanted_by.discard(str(requester))
        self._drive(door)
        return door

    def stick(self, name: str, stuck: bool | None) -> DoorDevice:
        """Door `name` sticks open (True) or closed (False) whatever is asked of it, moving
        there first; None frees it (it follows the requests again). A fault."""
        door = self[name]
        door.stuck = stuck
        self._drive(door)
        return door

    def _drive(self, door: DoorDevice) -> None:
        want = door.stuck if door.stuck is not None else bool(door.wanted_by)
        if (want and door.mode in (DoorMode.CLOSED, DoorMode.CLOSING)) or (
            not want and door.mode in (DoorMode.OPEN, DoorMode.OPENING)
        ):
            self._set(door, DoorMode.OPENING if want else DoorMode.CLOSING)
            self._moving.add(door.name)

    def open(self, name: str, requester: str = "api") -> DoorDevice:
        """`requester` wants the door open; returns the door."""
        return self.request(name, requester, True)

    def close(self, name: str, requester: str = "api") -> DoorDevice:
        """`requester` no longer wants the door open; returns the door."""
        return self.request(name, requester, False)

    def is_open(self, name: str) -> bool:
        """Whether the door is fully open."""
        return self[name].mode is DoorMode.OPEN

    def states(self) -> list[dict[str, Any]]:
        """Every door's `state()`."""
        return [door.state() for door in self.doors.values()]

    # -- the step ---------------------------------------------------------------------------

    def step(self) -> None:
        """Move the doors one step: open while anyone wants them open, close when nobody does."""
        dt = self.sim.params.timestep
        for name in list(self._moving):  # (only the doors that move: none most steps)
            door = self.doors[name]
            rate = dt / max(door.move_s, 1e-9)
            if door.mode is DoorMode.OPENING:
                door.opened = min(1.0, door.opened + rate)
                if door.opened >= 1.0:
                    self._set(door, DoorMode.OPEN)
                    self._moving.discard(name)
            elif door.mode is DoorMode.CLOSING:
                door.opened = max(0.0, door.opened - rate)
                if door.opened <= 0.0:
                    self._set(door, DoorMode.CLOSED)
                    self._moving.discard(name)

    def _set(self, door: DoorDevice, mode: DoorMode) -> None:
        now = self.sim.sim_time
        if mode is DoorMode.OPENING and door.mode is DoorMode.CLOSED:
            door.cycles += 1
            door.open_since = now
        elif mode is DoorMode.CLOSED and door.open_since is not None:
            door.open_s += now - door.open_since
            door.open_since = None
        door.mode = mode
        if door.body is not None:  # a wall unless fully open
            door.body.set_collision_mode(self._disabled if mode is DoorMode.OPEN else self._static)
        self.sim.events.emit("door_changed", door.name, mode.value, round(self.sim.sim_time, 9))

    def kpis(self) -> dict[str, Any]:
        """Each door's open time (s, not closed) and cycles, and their totals."""
        now = self.sim.sim_time
        open_s = {
            d.name: d.open_s + (now - d.open_since if d.open_since is not None else 0.0)
            for d in self.doors.values()
        }
        return {
            "door_open_s": round(sum(open_s.values()), 3),
            "door_cycles": sum(d.cycles for d in self.doors.values()),
            "doors": {
                d.name: {"open_s": round(open_s[d.name], 3), "cycles": d.cycles}
                for d in self.doors.values()
            },
        }

    def crossings_of(self, graph: NavGraph) -> dict[int, str]:
        """`crossings(graph)`, worked out once per graph."""
        cached = self._crossings.get(id(graph))
        if cached is None or cached[0] is not graph:
            cached = self._crossings[id(graph)] = (graph, self.crossings(graph))
        return cached[1]

    def crossings(self, graph: NavGraph) -> dict[int, str]:
        """Lanes (index) that pass through a door on their level, with the door's name."""
        out: dict[int, str] = {}
        for door in self.doors.values():
            if door.level not in graph.level_names:
                continue
            level = graph.level_names.index(door.level)
            for lane in range(graph.lane_count):
                a, b = int(graph.lane_from[lane]), int(graph.lane_to[lane])
                if graph.level[a] != level or graph.level[b] != level:
                    continue
                if crosses(graph.xy[a], graph.xy[b], door.ends[0], door.ends[1]):
                    out[lane] = door.name
        return out


def crosses(p1: np.ndarray, p2: np.ndarray, q1: np.ndarray, q2: np.ndarray) -> bool:
    """Whether segment p1-p2 meets segment q1-q2 (ends included; parallel ones never)."""
    d, e = p2 - p1, q2 - q1
    det = float(d[0] * e[1] - d[1] * e[0])
    if abs(det) < 1e-9:
        return False
    w = q1 - p1
    t = float(w[0] * e[1] - w[1] * e[0]) / det  # along the lane
    u = float(w[0] * d[1] - w[1] * d[0]) / det  # along the door
    return 0.0 <= t <= 1.0 and 0.0 <= u <= 1.0


def crossing_point(p1: np.ndarray, p2: np.ndarray, q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Where lane p1-p2 meets the door q1-q2 (assumes they cross)."""
    d, e = p2 - p1, q2 - q1
    det = float(d[0] * e[1] - d[1] * e[0])
    w = q1 - p1
    t = float(w[0] * e[1] - w[1] * e[0]) / det if abs(det) > 1e-12 else 0.5
    point: np.ndarray = p1 + t * d
    return point
