"""A kit-mode run written to MCAP, in the layout of fleetsim's recordings (so Foxglove,
`fleetsim replay` and `fleetsim.recording.Recording` read it):

- `/scene` (`foxglove.SceneUpdate`): the floor and the map's obstacles once (boxes, merged
  along rows), then each robot's next errand (a marker on its cell, a line from the robot)
  whenever the errands change;
- `/fleet` (`foxglove.PointCloud`): every robot's pose every tick, part-way moves and turns
  included; `/fleet/robots` (JSON): the robots' names (`a0`, `a1`, ...);
- `/events` (JSON): errands done and tasks finished, as the kit's events.

A grid cell is 1 m; x runs along the columns, y up the rows (the map's first row on top), so
that the map looks in Foxglove as it reads; the simulated time is ticks x the tick's budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.lorr.kit import KitRun
from fleetsim.recording import schemas
from fleetsim.recording.mcap_out import McapOut
from fleetsim.recording.schemas import varint
from fleetsim.recording.writer import NS, POINT, cloud_template

ROBOT_Z = 0.25


class KitRecorder:
    """Writes `run` to `path`: call `frame()` after each tick, `close()` at the end."""

    def __init__(self, run: KitRun, path: str | Path) -> None:
        self.run = run
        problem = run.problem
        meta = {
            "source": "fleetsim lorr (kit mode)",
            "problem": str(problem.source),
            "robots": str(run.team),
            "tick_ms": str(run.timing.tick_ms),
        }
        self._cloud, self._tag = cloud_template()
        self.out = McapOut(Path(path), meta)
        self._tick_ns = run.timing.tick_ms * 1_000_000
        self._announced: set[str] = set()
        self._errands: np.ndarray | None = None
        self._events_told = 0
        self.frames = 0
        robots = {"names": [f"a{i}" for i in range(run.team)], "handles": list(range(run.team))}
        self._json("/fleet/robots", schemas.ROBOTS, robots, 0)
        self._proto("/scene", self._map(), 0)

    # -- writing --------------------------------------------------------------------------

    def _proto(self, topic: str, message: Any, time_ns: int) -> None:
        if topic not in self._announced:
            self._announced.add(topic)
            self.out.channel(
                topic,
                message.DESCRIPTOR.full_name,
                "protobuf",
                schemas.descriptor_set(type(message)),
            )
        self.out.message(topic, time_ns, message.SerializeToString())

    def _json(self, topic: str, schema: bytes, record: dict[str, Any], time_ns: int) -> None:
        if topic not in self._announced:
            self._announced.add(topic)
            self.out.channel(topic, json.loads(schema)["title"], "jsonschema", schema)
        self.out.message(topic, time_ns, json.dumps(record, separators=(",", ":")).encode())

    def _xy(self, cells: np.ndarray) -> np.ndarray:
        """Cell centres (N, 2) in metres."""
        rows, cols = np.divmod(cells, self.run.cols)
        return np.column_stack([cols + 0.5, -(rows + 0.5)]) * self.run.cell_m

    # -- the map --------------------------------------------------------------------------

    def _map(self) -> Any:
        update = schemas.foxglove("SceneUpdate")()
        p = self.run.problem
        entity = update.entities.add(id="map", frame_id="world")
        m = self.run.cell_m
        floor = entity.cubes.add()
        _box(
            floor,
            m * p.cols / 2,
            -m * p.rows / 2,
            -0.01,
            m * p.cols,
            m * p.rows,
            0.02,
            (0.25, 0.25, 0.27, 1.0),
        )
        grid = np.asarray(p.blocked).reshape(p.rows, p.cols)
        for row in range(p.rows):
            line = grid[row]
            edges = np.flatnonzero(np.diff(np.concatenate(([0], line, [0]))))
            for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
                cube = entity.cubes.add()
                _box(
                    cube,
                    m * (start + end) / 2,
                    -m * (row + 0.5),
                    0.5,
                    m * (end - start),
                    m,
                    1.0,
                    (0.6, 0.6, 0.62, 1.0),
                )
        return update

    # -- a tick ---------------------------------------------------------------------------

    def frame(self) -> None:
        """The robots' poses now, the errands if they changed, the events since the last."""
        run = self.run
        time_ns = run.t * self._tick_ns
        xy, yaw = run.frame_poses()
        pos = np.column_stack([xy, np.full(run.team, ROBOT_Z)]).astype(np.float32)
        quat = np.zeros((run.team, 4), dtype=np.float32)
        quat[:, 2], quat[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
        self._cloud.timestamp.FromNanoseconds(time_ns)
        head = self._cloud.SerializeToString() + self._tag + varint(run.team * POINT.itemsize)
        if "/fleet" not in self._announced:
            self._announced.add("/fleet")
            self.out.channel(
                "/fleet",
                "foxglove.PointCloud",
                "protobuf",
                schemas.descriptor_set(type(self._cloud)),
            )
        self.out.fleet("/fleet", time_ns, head, pos, quat)
        errands = run.tasks.next_errand
        if self._errands is None or not np.array_equal(errands, self._errands):
            self._errands = errands.copy()
            self._proto("/scene", self._goals(xy, errands, time_ns), time_ns)
        self._events(time_ns)
        self.frames += 1
        self.out.flush()

    def _goals(self, xy: np.ndarray, errands: np.ndarray, time_ns: int) -> Any:
        update = schemas.foxglove("SceneUpdate")()
        entity = update.entities.add(id="errands", frame_id="world")
        entity.timestamp.FromNanoseconds(time_ns)
        robots = np.flatnonzero(errands >= 0)
        goals = self._xy(errands[robots])
        if len(robots):
            lines = entity.lines.add(type=2, thickness=0.05)  # LINE_LIST: robot -> errand
            lines.color.r, lines.color.g, lines.color.b, lines.color.a = 0.95, 0.65, 0.2, 0.5
            for (gx, gy), (rx, ry) in zip(goals.tolist(), xy[robots].tolist(), strict=True):
                lines.points.add(x=rx, y=ry, z=ROBOT_Z)
                lines.points.add(x=gx, y=gy, z=0.05)
            side = 0.5 * self.run.cell_m
            for gx, gy in goals.tolist():
                cube = entity.cubes.add()
                _box(cube, gx, gy, 0.05, side, side, 0.1, (0.95, 0.65, 0.2, 0.9))
        return update

    def _events(self, time_ns: int) -> None:
        events = self.run.tasks.events
        for tick, robot, task, done in events[self._events_told :]:
            task_done = self.run.tasks.all_tasks[task].t_completed == tick
            kind = "task_finished" if task_done else "errand_done"
            record = {
                "kind": kind,
                "time": tick * self._tick_ns / NS,
                "robot": f"a{robot}",
                "task": task,
                "errands_done": done,
            }
            self._json("/events", schemas.EVENT, record, time_ns)
        self._events_told = len(events)

    def close(self) -> None:
        """Finish the file."""
        self.out.close()


def _box(
    cube: Any,
    x: float,
    y: float,
    z: float,
    sx: float,
    sy: float,
    sz: float,
    rgba: tuple[float, float, float, float],
) -> None:
    cube.pose.position.x, cube.pose.position.y, cube.pose.position.z = x, y, z
    cube.pose.orientation.w = 1.0
    cube.size.x, cube.size.y, cube.size.z = sx, sy, sz
    cube.color.r, cube.color.g, cube.color.b, cube.color.a = rgba
