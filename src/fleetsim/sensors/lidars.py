"""`Lidars`: every lidar of one simulation, grouped by model, scanned at their rates.

Sensors with the same `LidarParams` form a `LidarGroup`, whose latest readings are one
(sensors x beams) float32 array: the fleet's scans at once, for code that takes them whole (a
learning environment, a recorder). A `Lidar` is one sensor's handle. In a step's sensing phase
the sensors that are due scan together: the shapes of the world are gathered once, and each
group's due sensors are cast in one call (`fleetsim.sensors.raycast.scan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry import quat
from fleetsim.memory import check_bytes
from fleetsim.sensors.lidar import LaserScan, LidarParams
from fleetsim.sensors.raycast import ShapeGrid, scan
from fleetsim.sensors.shapes import RayShapes, joined, ray_shapes
from fleetsim.state import BodyTable

IntArray = np.ndarray

_DUE = 1e-9  # seconds: a sensor due this close to now scans now
BYTES_PER_BEAM = 40  # measured: 2,000 lidars of 10,000 beams at 10 Hz, 35 bytes a beam at peak


def grid_cell(range_max: float) -> float:
    """The shape grid's cell for sensors that reach `range_max` metres: a fifth of it, from 1
    to 8 m (a scan then looks at about 80 cells)."""
    return min(max(range_max / 5.0, 1.0), 8.0)


@dataclass
class LidarGroup:
    """The lidars of one model and their latest scans.

    Attributes:
        params: the model.
        ids: sensor ids (n,).
        owners: handles of the bodies that carry them (n,).
        ranges: the latest scan of each, (n, beams) float32 (NaN before the first; see
            `LaserScan.ranges`).
        stamps: simulated time of each one's latest scan (n,), NaN before the first.
        poses: where each sensor was at its latest scan, world frame: (n, 4) x, y, z, yaw.
        next_due: when each scans next (n,).
    """

    params: LidarParams
    ids: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    owners: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    ranges: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    stamps: np.ndarray = field(default_factory=lambda: np.empty(0))
    poses: np.ndarray = field(default_factory=lambda: np.empty((0, 4)))
    next_due: np.ndarray = field(default_factory=lambda: np.empty(0))

    _pending: list[tuple[int, int, float]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids) + len(self._pending)

    def _append(self, sensor: int, owner: int, due: float) -> None:
        self._pending.append((sensor, owner, due))  # (joined in one go: fleets add thousands)

    def settle(self) -> None:
        """Join the sensors added since (their arrays are grown once for all of them)."""
        if not self._pending:
            return
        sensors, owners, due = (np.array(v) for v in zip(*self._pending, strict=True))
        self._pending.clear()
        blank = np.full((len(sensors), self.params.beams), np.nan, dtype=np.float32)
        self.ids = np.concatenate((self.ids, sensors.astype(np.int64)))
        self.owners = np.concatenate((self.owners, owners.astype(np.int64)))
        self.ranges = np.concatenate((self.ranges.reshape(-1, self.params.beams), blank))
        self.stamps = np.concatenate((self.stamps, np.full(len(sensors), np.nan)))
        self.poses = np.concatenate((self.poses, np.full((len(sensors), 4), np.nan)))
        self.next_due = np.concatenate((self.next_due, due.astype(np.float64)))

    def _drop(self, keep: np.ndarray) -> None:
        self.ids, self.owners = self.ids[keep], self.owners[keep]
        self.ranges, self.stamps = self.ranges[keep], self.stamps[keep]
        self.poses = self.poses[keep]
        self.next_due = self.next_due[keep]

    def scan_of(self, slot: int) -> LaserScan:
        """The latest scan of the sensor in row `slot`."""
        p = self.params
        return LaserScan(
            frame=p.frame,
            stamp=float(self.stamps[slot]),
            angle_min=p.angle_min,
            angle_max=p.angle_min + p.angle_increment * (p.beams - 1),
            angle_increment=p.angle_increment,
            range_min=p.range_min,
            range_max=p.range_max,
            ranges=self.ranges[slot].copy(),
            pose=tuple(self.poses[slot].tolist()),
        )


class Lidars:
    """The lidars of one simulation (`sim.lidars`), by model."""

    def __init__(self) -> None:
        self._groups: dict[LidarParams, LidarGroup] = {}  # by model
        self._model: dict[int, LidarParams] = {}  # sensor id -> its group's key
        self._next_id = 0
        self.version = 0  # counts the sensors added and removed (what others cached of them)
        self._of_owner: dict[int, list[int]] = {}  # body handle -> its sensors, in order

    def __len__(self) -> int:
        return len(self._model)

    def __bool__(self) -> bool:
        return bool(self._model)

    @property
    def beams(self) -> int:
        """The beams of every sensor (what their scans take in memory)."""
        return sum(len(group) * group.params.beams for group in self._groups.values())

    def add(self, owner: int, params: LidarParams, now: float) -> int:
        """A sensor of model `params` on the body `owner` (a handle), scanning from the next
        step on; its id."""
        beams = self.beams + params.beams
        check_bytes(BYTES_PER_BEAM * beams, f"{len(self) + 1:,} lidars ({beams:,} beams in all)",
                    "give them fewer beams, or fewer robots a lidar")  # fmt: skip
        sensor = self._next_id
        self._next_id += 1
        group = self._groups.setdefault(params, LidarGroup(params))
        group._append(sensor, owner, now)
        self._model[sensor] = params
        self._of_owner.setdefault(owner, []).append(sensor)
        self.version += 1
        return sensor

    def remove(self, sensor: int) -> None:
        """Take the sensor off its body."""
        group = self.group_of(sensor)
        group.settle()
        owner = int(group.owners[group.ids == sensor][0])
        group._drop(group.ids != sensor)
        del self._model[sensor]
        self._of_owner[owner].remove(sensor)
        if not self._of_owner[owner]:
            del self._of_owner[owner]
        self.version += 1
        if not len(group):
            del self._groups[group.params]

    def drop_owner(self, owner: int) -> None:
        """Remove every sensor the body `owner` carried (it was removed)."""
        for sensor in self.ids_of(owner):
            self.remove(sensor)

    def clear(self) -> None:
        """Remove every sensor."""
        self._groups.clear()
        self._model.clear()
        self._of_owner.clear()
        self.version += 1

    def ids_of(self, owner: int) -> list[int]:
        """The ids of the sensors on body `owner`, in the order they were added."""
        return list(self._of_owner.get(owner, ()))

    @property
    def groups(self) -> list[LidarGroup]:
        """The groups, one per model, in the order their first sensor was added."""
        return self.settled()

    def settled(self) -> list[LidarGroup]:
        """The groups, each with its sensors added since joined (see `LidarGroup.settle`)."""
        for group in self._groups.values():
            group.settle()
        return list(self._groups.values())

    def group_of(self, sensor: int) -> LidarGroup:
        """The group of sensor id `sensor`."""
        if sensor not in self._model:
            raise ConfigError(f"no lidar with id {sensor} (it was removed, or never added)")
        return self._groups[self._model[sensor]]

    def scan_of(self, sensor: int) -> LaserScan:
        """The latest scan of sensor `sensor`."""
        group = self.group_of(sensor)
        group.settle()
        return group.scan_of(int(np.flatnonzero(group.ids == sensor)[0]))

    def sense(
        self,
        bodies: BodyTable,
        now: float,
        rng: np.random.Generator,
        extra: RayShapes | None = None,
    ) -> list[LidarGroup]:
        """Scan every sensor due at `now` (simulated seconds) from the bodies' poses (and
        `extra` shapes that are not bodies: people); the groups that scanned."""
        due = {g.params: g.next_due <= now + _DUE for g in self.settled()}
        busy = [g for p, g in self._groups.items() if due[p].any()]
        if not busy:
            return []
        shapes = ray_shapes(bodies)
        if extra is not None and len(extra):
            shapes = joined(shapes, extra)
        grid = ShapeGrid.build(shapes, grid_cell(max(g.params.range_max for g in busy)))
        for group in busy:
            slots = np.flatnonzero(due[group.params])
            owners = group.owners[slots]
            rows = bodies.rows(owners)
            origins, yaws = _sensor_poses(bodies, rows, group.params.mount)
            hits = scan(shapes, grid, origins, yaws, owners, group.params.beam_layout())
            group.ranges[slots] = _readings(hits, group.params, rng)
            first = np.isnan(group.stamps[slots])  # (their rhythm starts with their first scan)
            group.next_due[slots[first]] = now
            group.stamps[slots] = now
            group.poses[slots, :3], group.poses[slots, 3] = origins, yaws
            period = 1.0 / group.params.rate
            behind = np.floor((now + _DUE - group.next_due[slots]) / period) + 1.0
            group.next_due[slots] += period * np.maximum(behind, 1.0)
        return busy


def _sensor_poses(
    bodies: BodyTable, rows: IntArray, mount: tuple[float, float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """World origins (S, 3) and yaws (S,) of sensors mounted at `mount` on body rows."""
    q = bodies["quat"][rows]
    origins = bodies["pos"][rows] + quat.rotate(q, np.broadcast_to(mount[:3], (len(rows), 3)))
    return origins, quat.yaw_of(q) + mount[3]


def _readings(hits: np.ndarray, params: LidarParams, rng: np.random.Generator) -> Any:
    """Ranges as a sensor reports them (REP 117): noise on the hits, then -inf nearer than
    `range_min`, +inf past `range_max` or no hit, NaN for a dropout; float32."""
    ranges = hits
    if params.noise_std > 0:
        ranges = ranges + rng.normal(0.0, params.noise_std, ranges.shape)
    ranges = np.where(ranges < params.range_min, -np.inf, ranges)
    ranges = np.where(ranges > params.range_max, np.inf, ranges)
    if params.dropout > 0:
        ranges = np.where(rng.random(ranges.shape) < params.dropout, np.nan, ranges)
    return ranges.astype(np.float32)


class Lidar:
    """One lidar on one body: `obj.add_lidar(...)` gives it."""

    def __init__(self, lidars: Lidars, sensor: int) -> None:
        self._lidars = lidars
        self.id = sensor

    @property
    def params(self) -> LidarParams:
        """Its model."""
        return self._lidars.group_of(self.id).params

    @property
    def owner(self) -> int:
        """The handle of the body that carries it."""
        group = self._lidars.group_of(self.id)
        return int(group.owners[group.ids == self.id][0])

    def scan(self) -> LaserScan:
        """Its latest scan (ranges NaN and stamp NaN before the first)."""
        return self._lidars.scan_of(self.id)

    @property
    def ranges(self) -> np.ndarray:
        """Its latest ranges, (beams,) float32 (see `LaserScan.ranges`)."""
        return self.scan().ranges

    def remove(self) -> None:
        """Take it off its body."""
        self._lidars.remove(self.id)

    def __repr__(self) -> str:
        return f"Lidar(id={self.id}, beams={self.params.beams}, frame={self.params.frame!r})"
