"""`ScanWriter`: what the chosen robots' lidars saw, for a recording.

- `/scan/<robot>` (`foxglove.LaserScan`, in the world frame: its `pose` is the sensor's): each
  scan of the robot's first lidar, as it was made (REP 117 ranges: +inf, -inf, NaN kept);
- `/fields` (`foxglove.SceneUpdate`): with each scan of a robot guarded by safety fields, its
  protective (red) and warning (amber) fields in force, as line loops in the world; an entity
  per robot (`fields/<robot>`), drawn thicker while an obstacle is in the field.

All robots' scans would be gigabytes (1,000 robots of 360 beams at 10 Hz are 30 MB a simulated
second), so a recording takes a few by default (`DEFAULT_SCANS`), and more when asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.errors import ConfigError, closest
from fleetsim.recording import schemas

DEFAULT_SCANS = 4  # robots whose scans a recording takes unless told
ScanChoice = int | str | Sequence[str]  # how many (the first robots with a lidar), "all", names
PROTECTIVE_RGBA = (0.9, 0.1, 0.1, 1.0)
WARNING_RGBA = (1.0, 0.65, 0.0, 1.0)


def check_choice(choice: ScanChoice) -> ScanChoice:
    """`choice` if it is one: a number >= 0, "all", or robot names."""
    if isinstance(choice, bool) or (isinstance(choice, int) and choice < 0):
        raise ConfigError(f"scans: a number of robots >= 0, 'all' or names, got {choice!r}")
    if isinstance(choice, str) and choice != "all":
        raise ConfigError(f"scans: a number of robots, 'all' or a list of names, got {choice!r}")
    return choice


class ScanWriter:
    """The scans (and fields) of the robots `choice` names, each written once, as made."""

    def __init__(self, sim: MultiRobotSimulationCore, choice: ScanChoice) -> None:
        self.sim, self.choice = sim, check_choice(choice)
        self._written: dict[int, float] = {}  # sensor id -> the stamp last written
        self._chosen: tuple[int, list[tuple[str, int, int]]] = (-1, [])  # (lidars' version, ...)
        if not isinstance(choice, int | str):
            names = {obj.name for obj in sim.world.objects.values()}
            for name in choice:
                if name not in names:
                    guess = closest(name, sorted(names))
                    hint = f": did you mean '{guess}'?" if guess else ""
                    raise ConfigError(f"scans: no robot named '{name}'{hint}")

    def chosen(self) -> list[tuple[str, int, int]]:
        """(robot name, body handle, its first lidar's id) of the robots chosen now (worked
        out again only when sensors came or went)."""
        if self.choice == 0 or not self.sim.lidars:
            return []
        if self._chosen[0] != self.sim.lidars.version:
            self._chosen = (self.sim.lidars.version, self._choose())
        return self._chosen[1]

    def _choose(self) -> list[tuple[str, int, int]]:
        world = self.sim.world
        first: dict[int, int] = {}
        for group in world.lidars.groups:
            for sensor, owner in zip(group.ids.tolist(), group.owners.tolist(), strict=True):
                first[owner] = min(sensor, first.get(owner, sensor))
        objects = world.objects
        if isinstance(self.choice, int):
            owners = sorted(first)[: self.choice]
        elif self.choice == "all":
            owners = sorted(first)
        else:
            wanted = set(self.choice)
            owners = [h for h in sorted(first) if objects[h].name in wanted]
        return [(objects[h].name, h, first[h]) for h in owners]

    def fresh(self) -> list[tuple[str, float, Any]]:
        """(topic, simulated time, message) of the scans made since the last call."""
        out: list[tuple[str, float, Any]] = []
        scan_class = schemas.foxglove("LaserScan")
        lines: list[Any] = []
        for name, owner, sensor in self.chosen():
            scan = self.sim.lidars.scan_of(sensor)
            if math.isnan(scan.stamp) or self._written.get(sensor) == scan.stamp:
                continue
            self._written[sensor] = scan.stamp
            message = scan_class(
                frame_id="world",
                start_angle=scan.angle_min,
                end_angle=scan.angle_max,
                ranges=scan.ranges.astype(np.float64).tolist(),
            )
            message.timestamp.FromNanoseconds(round(scan.stamp * 1e9))
            _set_pose(message.pose, scan.pose)
            out.append((f"/scan/{name}", scan.stamp, message))
            drawn = self.sim.safety.drawn_fields(owner)
            if drawn is not None:
                lines.append((name, scan, drawn))
        if lines:
            out.append(("/fields", self.sim.sim_time, self._fields(lines)))
        return out

    def _fields(self, lines: list[tuple[str, Any, Any]]) -> Any:
        update = schemas.foxglove("SceneUpdate")()
        for name, scan, (protective, warning, state) in lines:
            entity = update.entities.add(id=f"fields/{name}", frame_id="world")
            entity.timestamp.FromNanoseconds(round(scan.stamp * 1e9))
            for polygon, rgba, hot in (
                (protective, PROTECTIVE_RGBA, state == "protective"),
                (warning, WARNING_RGBA, state in ("warning", "protective")),
            ):
                if not polygon:
                    continue
                line = entity.lines.add(type=1, thickness=0.06 if hot else 0.02)  # LINE_LOOP
                line.pose.orientation.w = 1.0
                line.color.r, line.color.g, line.color.b, line.color.a = rgba
                for x, y in _to_world(np.asarray(polygon), scan.pose).tolist():
                    line.points.add(x=x, y=y, z=scan.pose[2])
        return update


def _to_world(points: np.ndarray, pose: Sequence[float]) -> np.ndarray:
    """Points (K, 2) of the sensor's frame in the world's, the sensor at `pose` (x, y, z, yaw)."""
    c, s = math.cos(pose[3]), math.sin(pose[3])
    return np.stack(
        (
            pose[0] + c * points[:, 0] - s * points[:, 1],
            pose[1] + s * points[:, 0] + c * points[:, 1],
        ),
        axis=1,
    )


def _set_pose(target: Any, pose: Sequence[float]) -> None:
    x, y, z, yaw = pose
    target.position.x, target.position.y, target.position.z = x, y, z
    target.orientation.z, target.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
