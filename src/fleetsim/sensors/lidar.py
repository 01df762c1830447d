"""`LidarParams`: a planar range sensor (2-D lidar) as a robot carries it, and `LaserScan`:
one reading, as ROS's `sensor_msgs/LaserScan` has it (REP 117 for what cannot be measured)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, unknown_key_message
from fleetsim.sensors.raycast import Beams

FULL_TURN = 2.0 * math.pi


@dataclass(frozen=True)
class LidarParams:
    """A 2-D lidar: beams in the horizontal plane at its mounting height.

    Attributes:
        beams: how many beams a scan has.
        fov: field of view, radians, centred on the sensor's x axis (2 pi: all round, the
            beams `fov / beams` apart; less: the first and last beams at -fov/2 and +fov/2).
        range_min: metres; a nearer hit reads -inf (REP 117).
        range_max: metres; no hit within it reads +inf.
        rate: scans per simulated second (at most one per step).
        mount: (x, y, z, yaw) of the sensor in the robot's base frame, metres and radians.
        noise_std: standard deviation of Gaussian range noise, metres (0: exact).
        dropout: chance that a beam returns nothing (reads NaN).
        frame: the sensor's frame name (ROS `frame_id`).
    """

    beams: int = 360
    fov: float = FULL_TURN
    range_min: float = 0.05
    range_max: float = 20.0
    rate: float = 10.0
    mount: tuple[float, float, float, float] = (0.0, 0.0, 0.2, 0.0)
    noise_std: float = 0.0
    dropout: float = 0.0
    frame: str = "laser"

    def __post_init__(self) -> None:
        mount = tuple(float(v) for v in self.mount)
        object.__setattr__(self, "mount", mount)
        problems = []
        if not (isinstance(self.beams, int) and 1 <= self.beams <= 100_000):
            problems.append(f"beams must be a whole number from 1 to 100000, got {self.beams!r}")
        if not 0.0 < self.fov <= FULL_TURN + 1e-9:
            problems.append(f"fov must be in (0, 2 pi] radians, got {self.fov!r}")
        if not 0.0 <= self.range_min < self.range_max < math.inf:
            problems.append(
                f"need 0 <= range_min < range_max < inf, got {self.range_min!r} and "
                f"{self.range_max!r}"
            )
        if not 0.0 < self.rate < math.inf:
            problems.append(f"rate must be > 0 scans a second, got {self.rate!r}")
        if len(mount) != 4 or not all(math.isfinite(v) for v in mount):
            problems.append(f"mount must be 4 finite numbers (x, y, z, yaw), got {self.mount!r}")
        if not 0.0 <= self.noise_std < math.inf:
            problems.append(f"noise_std must be >= 0 metres, got {self.noise_std!r}")
        if not 0.0 <= self.dropout <= 1.0:
            problems.append(f"dropout must be a chance in [0, 1], got {self.dropout!r}")
        if not self.frame:
            problems.append("frame must be a non-empty name")
        if problems:
            raise ConfigError("LidarParams: " + "; ".join(problems))

    @property
    def full_circle(self) -> bool:
        """Whether the beams go all round."""
        return self.fov >= FULL_TURN - 1e-9

    @property
    def angle_min(self) -> float:
        """The first beam's angle in the sensor's frame, radians."""
        return -FULL_TURN / 2 if self.full_circle else -self.fov / 2

    @property
    def angle_increment(self) -> float:
        """The angle between beams, radians."""
        if self.full_circle:
            return FULL_TURN / self.beams
        return self.fov / (self.beams - 1) if self.beams > 1 else 0.0

    def beam_layout(self) -> Beams:
        """The beams as the scan casts them."""
        step = self.angle_increment or 1.0  # (one beam: any increment)
        return Beams(self.angle_min, step, self.beams, self.range_max)


@dataclass(frozen=True)
class LaserScan:
    """One scan of one sensor, as `sensor_msgs/LaserScan`.

    Attributes:
        frame: the sensor's frame name.
        stamp: simulated time of the scan, seconds.
        angle_min: first beam's angle, radians.
        angle_max: last beam's angle, radians.
        angle_increment: radians between beams.
        range_min: metres.
        range_max: metres.
        ranges: (beams,) float32: metres; +inf no hit within range, -inf a hit nearer than
            range_min, NaN a dropout.
        pose: where the sensor was, world frame: (x, y, z, yaw).
    """

    frame: str
    stamp: float
    angle_min: float
    angle_max: float
    angle_increment: float
    range_min: float
    range_max: float
    ranges: np.ndarray = field(repr=False)
    pose: tuple[float, ...] = (math.nan,) * 4

    def points(self) -> np.ndarray:
        """The hits as (x, y) points in the sensor's frame, (K, 2)."""
        angles = self.angle_min + self.angle_increment * np.arange(len(self.ranges))
        hit = np.isfinite(self.ranges)
        r = self.ranges[hit].astype(np.float64)
        return np.stack((r * np.cos(angles[hit]), r * np.sin(angles[hit])), axis=1)

    def world_points(self) -> np.ndarray:
        """The hits as (x, y) points in the world, (K, 2)."""
        x, y, _, yaw = self.pose
        c, s = math.cos(yaw), math.sin(yaw)
        local = self.points()
        return np.stack(
            (x + c * local[:, 0] - s * local[:, 1], y + s * local[:, 0] + c * local[:, 1]), 1
        )


def lidar_params(value: Any) -> LidarParams:
    """`value` as `LidarParams`: one already, a mapping of its fields, or None (defaults)."""
    if value is None:
        return LidarParams()
    if isinstance(value, LidarParams):
        return value
    if isinstance(value, dict):
        known = set(LidarParams.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(unknown_key_message(unknown[0], known, "lidar"))
        return LidarParams(**value)
    raise ConfigError(f"a lidar needs LidarParams or a mapping of its fields, got {value!r}")
