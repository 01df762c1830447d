"""`Recorder`: a run written to an MCAP file that opens in Foxglove with no set-up.

Channels (log times are simulated time):
- `/scene` (`foxglove.SceneUpdate`): the static world once (floor, static bodies as boxes, the
  site's lanes and named places), then other bodies (loads, carts) when they appear, move or go;
- `/fleet` (`foxglove.PointCloud`): every robot's x, y, z (float64), yaw (float32) and `id` (its
  row in `/fleet/robots`), ONE message per recorded frame for the whole fleet;
- `/fleet/robots` (JSON): the robots' names and handles, at the start and when robots change;
- `/events` (JSON): collisions and action events, with their time;
- `/kpi` (JSON): the fleet manager's KPI series, when there is one.

The recorder only reads: it runs after each step and never changes the simulation.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.geometry import quat
from fleetsim.recording import schemas
from fleetsim.recording.scene import SceneWriter

NS = 1_000_000_000
POINT = np.dtype([("x", "<f8"), ("y", "<f8"), ("z", "<f8"), ("yaw", "<f4"), ("id", "<u4")])
PROFILE = "fleetsim"


class Recorder:
    """Writes `sim` to `path` at `rate` frames per simulated second until `close()`."""

    def __init__(self, sim: Any, path: str | Path, rate: float = 10.0,
                 metadata: dict[str, str] | None = None) -> None:  # fmt: skip
        if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
            raise ConfigError(f"record rate: expected frames per second > 0, got {rate!r}")
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise FleetSimError(schemas.NEEDS) from None
        self.sim, self.path, self.rate = sim, Path(path), float(rate)
        try:
            self._file = self.path.open("wb")
        except OSError as exc:
            raise ConfigError(f"--record {path}: {exc.strerror or exc}") from None
        self._mcap: Any = Writer(self._file, compression=CompressionType.ZSTD)
        self._mcap.start(profile=PROFILE, library="fleetsim")
        self._mcap.add_metadata("fleetsim", {k: str(v) for k, v in (metadata or {}).items()})
        self._channels: dict[str, int] = {}
        self._sequence = 0
        self.frames = 0
        self._next_frame = 0
        self._robots: np.ndarray | None = None  # handles, in /fleet id order
        self._cloud = self._cloud_template()
        self.scene = SceneWriter(sim)
        self._hooks = [
            ("post_step", sim.on("post_step", lambda *_: self._after_step())),
            ("object_spawned", sim.on("object_spawned", lambda *_: self._robots_changed())),
            ("object_removed", sim.on("object_removed", self._removed)),
            ("action_completed", sim.on("action_completed", self._action("action_completed"))),
            ("action_failed", sim.on("action_failed", self._action("action_failed"))),
            ("collision_started", sim.on("collision_started", self._collision)),
        ]
        self._closed = False
        self._kpis: list[dict[str, Any]] | None = None
        self._kpis_sent = 0
        self._write_json("/events", schemas.EVENT, {"kind": "recording_started",
                                                    "time": sim.sim_time})  # fmt: skip
        self._frame()

    # -- channels ---------------------------------------------------------------------------

    def _channel(self, topic: str, schema_name: str, encoding: str, schema: bytes) -> int:
        channel = self._channels.get(topic)
        if channel is None:
            schema_id = self._mcap.register_schema(schema_name, encoding, schema)
            message_encoding = "protobuf" if encoding == "protobuf" else "json"
            channel = self._mcap.register_channel(topic, message_encoding, schema_id)
            self._channels[topic] = channel
        return channel

    def _write(self, channel: int, data: bytes, time_s: float | None = None) -> None:
        t = round((self.sim.sim_time if time_s is None else time_s) * NS)
        self._mcap.add_message(channel, log_time=t, data=data, publish_time=t,
                               sequence=self._sequence)  # fmt: skip
        self._sequence += 1

    def _write_proto(self, topic: str, message: Any) -> None:
        name = message.DESCRIPTOR.full_name
        channel = self._channel(topic, name, "protobuf", schemas.descriptor_set(type(message)))
        self._write(channel, message.SerializeToString())

    def _write_json(self, topic: str, schema: bytes, record: dict[str, Any]) -> None:
        title = json.loads(schema)["title"]
        channel = self._channel(topic, title, "jsonschema", schema)
        self._write(channel, json.dumps(record, separators=(",", ":")).encode())

    # -- frames -----------------------------------------------------------------------------

    def _cloud_template(self) -> Any:
        cloud_class = schemas.foxglove("PointCloud")
        field_class = schemas.foxglove("PackedElementField")
        cloud = cloud_class(frame_id="world", point_stride=POINT.itemsize)
        kinds = {"<f8": field_class.FLOAT64, "<f4": field_class.FLOAT32,
                 "<u4": field_class.UINT32}  # fmt: skip
        for name, (kind, offset, *_) in (POINT.fields or {}).items():
            cloud.fields.add(name=name, offset=offset, type=kinds[kind.str])
        cloud.pose.orientation.w = 1.0
        return cloud

    def _after_step(self) -> None:
        if self.sim.step_count >= self._next_frame:
            self._frame()

    def _frame(self) -> None:
        """One recorded frame: the fleet's poses, and whatever changed in the scene."""
        bodies = self.sim.world.bodies
        if self._robots is None:
            self._robots = np.array(bodies.handles[bodies["robot"]], dtype=np.int64)
            objects = self.sim.world.objects
            names = [objects[h].name for h in self._robots.tolist()]
            self._write_json("/fleet/robots", schemas.ROBOTS,
                             {"names": names, "handles": self._robots.tolist()})  # fmt: skip
        rows = bodies.rows(self._robots)
        points = np.empty(len(rows), dtype=POINT)
        pos = bodies["pos"][rows]
        points["x"], points["y"], points["z"] = pos[:, 0], pos[:, 1], pos[:, 2]
        points["yaw"] = quat.yaw_of(bodies["quat"][rows])
        points["id"] = np.arange(len(rows))
        cloud = self._cloud
        cloud.timestamp.FromNanoseconds(round(self.sim.sim_time * NS))
        cloud.data = points.tobytes()
        self._write_proto("/fleet", cloud)
        update = self.scene.update(self.frames == 0)
        if update is not None:
            self._write_proto("/scene", update)
        self._write_kpis()
        self.frames += 1
        steps_per_frame = 1.0 / (self.rate * self.sim.params.timestep)
        self._next_frame = math.ceil(self.frames * steps_per_frame - 1e-9)

    # -- events -----------------------------------------------------------------------------

    def _robots_changed(self) -> None:
        self._robots = None  # listed again at the next frame

    def _removed(self, obj: Any) -> None:
        self._robots = None
        self.scene.removed(obj)

    def _action(self, kind: str) -> Any:
        def record(agent: Any, action: Any) -> None:
            event = {"kind": kind, "time": self.sim.sim_time, "robot": agent.name,
                     "action": type(action).__name__}  # fmt: skip
            reason = getattr(action, "error_message", None)
            if reason:
                event["reason"] = str(reason)
            self._write_json("/events", schemas.EVENT, event)

        return record

    def _collision(self, a: Any, b: Any) -> None:
        event = {"kind": "collision", "time": self.sim.sim_time,
                 "a": getattr(a, "name", str(a)), "b": getattr(b, "name", str(b))}  # fmt: skip
        self._write_json("/events", schemas.EVENT, event)

    def watch_kpis(self, series: list[dict[str, Any]]) -> None:
        """Record the points appended to `series` (a fleet manager's KPI time series, each
        with its simulated `time`) as they come, at the next frame."""
        self._kpis, self._kpis_sent = series, 0

    def _write_kpis(self) -> None:
        series = self._kpis
        while series is not None and self._kpis_sent < len(series):
            point = series[self._kpis_sent]
            channel = self._channel("/kpi", "fleetsim.Kpi", "jsonschema", schemas.KPI)
            self._write(channel, json.dumps(point, separators=(",", ":"), default=float).encode(),
                        float(point.get("time", self.sim.sim_time)))  # fmt: skip
            self._kpis_sent += 1

    # -- the end ----------------------------------------------------------------------------

    def close(self) -> None:
        """Write the last frame (if the clock moved since) and finish the file."""
        if self._closed:
            return
        self._closed = True
        self._write_kpis()
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._mcap.finish()
        self._file.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
