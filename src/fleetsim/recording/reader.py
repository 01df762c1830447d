"""`Recording`: an MCAP file written by `Recorder`, read back as arrays.

with fleetsim.recording.open("run.mcap") as rec:
    for frame in rec.frames():
        frame.time, frame.names, frame.xyz, frame.yaw      # (N,), (N, 3), (N,)
    rec.metadata["scenario"], rec.events()

A recording cut short (a run killed with SIGKILL or by the OOM killer) opens too: its whole
records are read from the start (`Salvaged`), and `rec.truncated` says how much was found. So
does a damaged one (a chunk whose bytes are wrong): its damaged records are skipped, the rest
is read, and `rec.truncated` says how many were lost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.recording import schemas
from fleetsim.recording.salvage import Salvaged
from fleetsim.recording.writer import NS, POINT


@dataclass
class RecordedScan:
    """One recorded lidar scan: the sensor's world `pose` (x, y, z, yaw) and `ranges` (REP
    117) from `start_angle` to `end_angle`, evenly spaced."""

    time: float
    pose: tuple[float, float, float, float]
    start_angle: float
    end_angle: float
    ranges: np.ndarray

    def world_points(self) -> np.ndarray:
        """The hits as (x, y) points in the world, (K, 2)."""
        n = len(self.ranges)
        angles = self.pose[3] + np.linspace(self.start_angle, self.end_angle, n)
        hit = np.isfinite(self.ranges)
        r = self.ranges[hit].astype(np.float64)
        x, y = self.pose[0], self.pose[1]
        return np.stack((x + r * np.cos(angles[hit]), y + r * np.sin(angles[hit])), axis=1)


@dataclass
class Frame:
    """The fleet at one recorded instant: `names[i]` is at `xyz[i]` facing `yaw[i]`."""

    time: float
    names: list[str]
    xyz: np.ndarray
    yaw: np.ndarray

    def pose_of(self, name: str) -> tuple[np.ndarray, float]:
        """Where robot `name` was in this frame: position (3,) and yaw."""
        k = self.names.index(name)
        return self.xyz[k], float(self.yaw[k])


class Recording:
    """A recording read back: metadata, frames (robot poses as arrays), events, scene and KPI
    points; one that was cut short is read up to what is complete (`truncated`)."""

    def __init__(self, path: str | Path) -> None:
        try:
            from mcap.reader import make_reader
        except ImportError:
            raise FleetSimError(schemas.NEEDS) from None
        self.path = Path(path)
        try:
            self._file = self.path.open("rb")
        except OSError as exc:
            raise ConfigError(f"{path}: {exc.strerror or exc}") from None
        try:
            self._reader: Any = make_reader(self._file)
            header = self._reader.get_header()
        except Exception as exc:  # the mcap package raises its own kinds for a bad file
            self._file.close()
            raise ConfigError(f"{path}: not an MCAP recording ({exc})") from None
        if header.profile != "fleetsim":
            self._file.close()
            raise ConfigError(
                f"{path}: an MCAP file, but not a fleetsim recording (profile {header.profile!r})"
            )
        self.truncated: str | None = None  # what was read of a file cut short or damaged
        try:
            self._reader.get_summary()
        except Exception:  # no summary and footer: read it from the start
            self._salvage("no summary: the run was killed?")
        self.metadata: dict[str, str] = {}
        for record in self._reader.iter_metadata():
            if record.name == "fleetsim":
                self.metadata = dict(record.metadata)

    def messages(
        self, *topics: str, start: float | None = None, end: float | None = None
    ) -> Iterator[tuple[str, float, bytes]]:
        """(topic, simulated time, raw bytes) of `topics`' messages (every topic's when none
        is named) from `start` to before `end` (simulated seconds), in time order."""
        first = None if start is None else max(round(start * NS), 0)
        last = None if end is None else max(round(end * NS), 0)
        given, at_time = -1, 0  # the last log time given, and how many at it
        try:
            for _schema, channel, message in self._reader.iter_messages(
                topics=list(topics) or None, starting_at=first, ending_before=last
            ):
                given, at_time = message.log_time, (at_time + 1 if message.log_time == given else 1)
                yield channel.topic, message.log_time / NS, message.data
        except Exception as exc:  # a damaged chunk: read the rest record by record
            if isinstance(self._reader, Salvaged):
                raise
            self._salvage(f"damaged: {type(exc).__name__}")
            for _schema, channel, message in self._reader.iter_messages(
                topics=list(topics) or None, starting_at=first, ending_before=last
            ):
                if message.log_time < given or (message.log_time == given and at_time > 0):
                    at_time -= message.log_time == given
                    continue  # (given before the damage was met)
                yield channel.topic, message.log_time / NS, message.data

    def _salvage(self, why: str) -> None:
        """Read the file record by record from now on (`Salvaged`), saying what was lost."""
        try:  # where the chunks start, if the file's summary can say
            chunk_starts = [c.chunk_start_offset for c in self._reader.get_summary().chunk_indexes]
        except Exception:  # (no summary: a killed run; or a damaged one)
            chunk_starts = []
        salvaged = Salvaged(self._file, chunk_starts)
        self._reader = salvaged
        lost = []
        if salvaged.damaged:
            lost.append(
                f"{salvaged.damaged} damaged record(s) skipped (their bytes are wrong: "
                "the file was damaged after it was written)"
            )
        if not salvaged.complete:
            lost.append(f"cut short at byte {salvaged.stopped_at} ({why})")
        if lost:
            self.truncated = (
                f"{self.path}: {'; '.join(lost)}; read what is intact: "
                f"{salvaged.message_count} messages up to "
                f"{salvaged.end_ns / NS:.1f} s"
            )

    @property
    def end_time(self) -> float:
        """Simulated time of the last message."""
        summary = self._reader.get_summary()
        if summary is None or summary.statistics is None:
            return max((t for _topic, t, _d in self.messages("/fleet")), default=0.0)
        return float(summary.statistics.message_end_time) / NS

    def frames(self, start: float = 0.0) -> Iterator[Frame]:
        """The recorded frames of the fleet from `start` (simulated seconds), in time order."""
        cloud_class = schemas.foxglove("PointCloud")
        names: list[str] = []
        for _topic, _time, data in self.messages("/fleet/robots", end=start):
            names = json.loads(data)["names"]  # who was there when `start` came
        for topic, time, data in self.messages("/fleet", "/fleet/robots", start=start):
            if topic == "/fleet/robots":
                names = json.loads(data)["names"]
                continue
            cloud = cloud_class()
            cloud.ParseFromString(data)
            points = np.frombuffer(cloud.data, dtype=POINT)
            xyz = np.column_stack([points["x"], points["y"], points["z"]])
            yaw = points["yaw"].astype(np.float64)
            yield Frame(time, [names[i] for i in points["id"].tolist()], xyz, yaw)

    def static_boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The static world as recorded (the first `/scene` update's boxes, the floor
        included): centres (K, 3), sizes (K, 3) and yaws (K,)."""
        scene_class = schemas.foxglove("SceneUpdate")
        for _topic, _time, data in self.messages("/scene"):
            for entity in scene_class.FromString(data).entities:
                if entity.id != "static" or not entity.cubes:
                    continue
                cubes = list(entity.cubes)
                centres = np.array(
                    [[c.pose.position.x, c.pose.position.y, c.pose.position.z] for c in cubes]
                )
                sizes = np.array([[c.size.x, c.size.y, c.size.z] for c in cubes])
                q = [c.pose.orientation for c in cubes]
                yaws = np.array([2 * math.atan2(o.z, o.w) for o in q])
                return centres, sizes, yaws
        return np.empty((0, 3)), np.empty((0, 3)), np.empty(0)

    def fields(
        self,
    ) -> Iterator[tuple[float, str, list[tuple[np.ndarray, tuple[float, ...], float]]]]:
        """The recorded safety fields: (time, robot, [(corners (K, 3), rgba, thickness), ...])
        for each robot at each of its scans, in time order."""
        update_class = schemas.foxglove("SceneUpdate")
        for _topic, time, data in self.messages("/fields"):
            for entity in update_class.FromString(data).entities:
                loops: list[tuple[np.ndarray, tuple[float, ...], float]] = [
                    (
                        np.array([[p.x, p.y, p.z] for p in line.points]),
                        (line.color.r, line.color.g, line.color.b, line.color.a),
                        float(line.thickness),
                    )
                    for line in entity.lines
                ]
                yield time, str(entity.id).removeprefix("fields/"), loops

    def scanned(self) -> list[str]:
        """The robots whose scans the recording holds (`/scan/<robot>`)."""
        summary = self._reader.get_summary()
        if summary is not None:
            topics = {channel.topic for channel in summary.channels.values()}
        else:
            topics = {topic for topic, _t, _d in self.messages()}
        return sorted(t.removeprefix("/scan/") for t in topics if t.startswith("/scan/"))

    def scans(self, robot: str, start: float = 0.0) -> Iterator[RecordedScan]:
        """Robot `robot`'s recorded scans from `start` (simulated seconds), in time order."""
        scan_class = schemas.foxglove("LaserScan")
        for _topic, time, data in self.messages(f"/scan/{robot}", start=start):
            scan = scan_class.FromString(data)
            p, q = scan.pose.position, scan.pose.orientation
            yaw = 2 * math.atan2(q.z, q.w)
            ranges = np.array(scan.ranges, dtype=np.float32)
            yield RecordedScan(time, (p.x, p.y, p.z, yaw), scan.start_angle, scan.end_angle, ranges)

    def events(self) -> list[dict[str, Any]]:
        """Everything on `/events`, in time order."""
        return [json.loads(data) for _t, _time, data in self.messages("/events")]

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
