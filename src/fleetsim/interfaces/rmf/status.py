"""`StatusBoard`: the fleet's status after one step, as RMF's `status/` endpoint answers it.

A board is built from arrays at the end of every step and never changed after (the HTTP side
reads whichever board is current; the next step swaps in a new one). A robot's answer is
encoded to JSON bytes the first time it is asked for and kept on the board, so a robot polled
ten times a second costs one encoding per step, and robots nobody asks about cost nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

NO_COMMAND = -1  # in `cmd_id` and `completed`: none


@dataclass
class StatusBoard:
    """Per robot (rows in the fleet's order): pose, battery percent, running command and its
    seconds to go, last completed command, and whether it is blocked."""

    names: list[str]
    quoted: list[str]  # the names as JSON strings
    map_name: list[str]  # per robot, as JSON strings (a building's robots are on its levels)
    xy: list[list[float]]
    yaw: list[float]
    battery: list[float]
    cmd_id: list[int]
    duration: list[float]
    completed: list[int]
    replan: list[bool]
    _bodies: dict[int, bytes] = field(default_factory=dict)
    _all: bytes | None = None

    @classmethod
    def build(
        cls,
        names: list[str],
        quoted: list[str],
        map_name: list[str],
        xy: np.ndarray,
        yaw: np.ndarray,
        battery: np.ndarray,
        cmd_id: np.ndarray,
        duration: np.ndarray,
        completed: np.ndarray,
        replan: np.ndarray,
    ) -> StatusBoard:
        """The board of one step from the fleet's arrays: each robot's answer encoded when first
        asked for."""
        return cls(
            names,
            quoted,
            map_name,
            xy.tolist(),
            yaw.tolist(),
            battery.tolist(),
            cmd_id.tolist(),
            duration.tolist(),
            completed.tolist(),
            replan.tolist(),
        )

    def data(self, k: int) -> dict[str, Any]:
        """Robot `k`'s status as a dict (what `body(k)` carries under `data`)."""
        cmd = self.cmd_id[k]
        arrival = None if cmd == NO_COMMAND else {"cmd_id": cmd, "duration": self.duration[k]}
        done = self.completed[k]
        return {
            "robot_name": self.names[k],
            "map_name": json.loads(self.map_name[k]),
            "position": {"x": self.xy[k][0], "y": self.xy[k][1], "yaw": self.yaw[k]},
            "battery": self.battery[k],
            "destination_arrival": arrival,
            "last_completed_request": None if done == NO_COMMAND else done,
            "replan": self.replan[k],
        }

    def body(self, k: int) -> bytes:
        """The whole `status/?robot_name=` answer for robot `k`, as JSON bytes."""
        body = self._bodies.get(k)
        if body is None:
            body = b'{"data":%s,"success":true,"msg":""}' % self._encode(k)
            self._bodies[k] = body
        return body

    def all_body(self) -> bytes:
        """The `status/` answer for every robot (under `data.all_robots` and `all_robots`)."""
        if self._all is None:
            robots = b"[" + b",".join(self._encode(k) for k in range(len(self.names))) + b"]"
            self._all = b'{"data":{"all_robots":%s},"success":true,"msg":"","all_robots":%s}' % (
                robots,
                robots,
            )
        return self._all

    def _encode(self, k: int) -> bytes:
        cmd, done = self.cmd_id[k], self.completed[k]
        x, y = self.xy[k]
        arrival = "null"
        if cmd != NO_COMMAND:
            arrival = f'{{"cmd_id":{cmd},"duration":{self.duration[k]!r}}}'
        last = "null" if done == NO_COMMAND else str(done)
        return (
            f'{{"robot_name":{self.quoted[k]},"map_name":{self.map_name[k]},'
            f'"position":{{"x":{x!r},"y":{y!r},"yaw":{self.yaw[k]!r}}},'
            f'"battery":{self.battery[k]!r},"destination_arrival":{arrival},'
            f'"last_completed_request":{last},"replan":{"true" if self.replan[k] else "false"}}}'
        ).encode()
