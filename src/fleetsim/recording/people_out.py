"""`PeopleWriter`: a simulation's people (`sim.people`) as `/people`, a `foxglove.SceneUpdate`
with one entity, `people`, holding an upright cylinder per person (their body's width, 1.7 m
tall, orange, on their floor), replaced each recorded frame; a deletion when the last one has
left. A recording and the live view both carry it. A crowd larger than `PER_FRAME` is written
every ceil(n / PER_FRAME) frames (129 bytes a person: 10,000 people each frame at 10 Hz would
be 13 MB a simulated second).

A frame of 1,000 people is made without building 1,000 protobuf objects: one cylinder is
serialised with marker values, and the frame's cylinders are copies of its bytes with each
person's x, y and width written where the markers were (fixed-width doubles: every cylinder
has the same length).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from fleetsim.recording.schemas import foxglove, varint

HEIGHT_M = 1.7  # (as the lidars see people: `fleetsim.core.people.HEIGHT_M`)
ORANGE = (1.0, 0.55, 0.1, 1.0)
MARK_X, MARK_Y, MARK_Z, MARK_D = 1234.5, 2345.5, 3456.5, 4567.5
PER_FRAME = 2000  # a larger crowd is written every few frames (all of it, each time)


class PeopleWriter:
    """The `/people` message of each frame (None when there is nothing to say)."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self._shown = False  # whether the last update drew someone
        self._skipped = 0  # frames since the crowd was last written
        self._template: tuple[bytes, dict[str, list[int]]] | None = None

    def _cylinder(self) -> tuple[bytes, dict[str, list[int]]]:
        """One cylinder as an entity's `cylinders` entry (tag, length, message), and the byte
        offsets of its x, y, z and width fields."""
        if self._template is None:
            entity = foxglove("SceneEntity")()
            cylinder = entity.cylinders.add()
            cylinder.pose.position.x, cylinder.pose.position.y = MARK_X, MARK_Y
            cylinder.pose.position.z = MARK_Z
            cylinder.pose.orientation.w = 1.0
            cylinder.size.x = cylinder.size.y = MARK_D
            cylinder.size.z = HEIGHT_M
            cylinder.bottom_scale = cylinder.top_scale = 1.0
            color = cylinder.color
            color.r, color.g, color.b, color.a = ORANGE
            raw = entity.SerializeToString()
            where: dict[str, list[int]] = {}
            for name, mark in (("x", MARK_X), ("y", MARK_Y), ("z", MARK_Z), ("d", MARK_D)):
                packed, at, found = struct.pack("<d", mark), 0, []
                while (at := raw.find(packed, at)) >= 0:
                    found.append(at)
                    at += 8
                where[name] = found
            assert [len(v) for v in where.values()] == [1, 1, 1, 2]
            self._template = (raw, where)
        return self._template

    def update(self) -> bytes | None:
        """This frame's `/people` SceneUpdate, serialised, or None (no people now, nor at the
        last frame)."""
        people = self.sim._people
        crowd = people.crowd if people is not None else None
        stamp = round(self.sim.sim_time * 1e9)
        scene = foxglove("SceneUpdate")()
        if crowd is None or not len(crowd):
            if not self._shown:
                return None
            self._shown = False
            deletion = scene.deletions.add(id="people", type=0)  # 0: the entity of that id
            deletion.timestamp.FromNanoseconds(stamp)
            data: bytes = scene.SerializeToString()
            return data
        n = len(crowd)
        if self._shown and self._skipped + 1 < -(-n // PER_FRAME):
            self._skipped += 1
            return None
        self._shown, self._skipped = True, 0
        entity = foxglove("SceneEntity")(id="people", frame_id="world")
        entity.timestamp.FromNanoseconds(stamp)
        raw, where = self._cylinder()
        floor = people.floors()
        rows = np.tile(np.frombuffer(raw, dtype=np.uint8), (n, 1))
        values = {"x": crowd.x[:, 0], "y": crowd.x[:, 1], "z": floor + HEIGHT_M / 2,
                  "d": 2.0 * crowd.radius}  # fmt: skip
        for name, offsets in where.items():
            column = np.ascontiguousarray(values[name], dtype="<f8").view(np.uint8).reshape(n, 8)
            for at in offsets:
                rows[:, at : at + 8] = column
        body: bytes = entity.SerializeToString() + rows.tobytes()  # (repeated: appended)
        number = int(scene.DESCRIPTOR.fields_by_name["entities"].number)
        return varint(number << 3 | 2) + varint(len(body)) + body
