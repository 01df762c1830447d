"""`Replay`: a recording shown again in a simulation that only displays it.

The static world comes from the recording's first `/scene` update (its boxes), each robot is a
box moved to its recorded pose frame by frame (all in one `set_poses`), and in the PyBullet
window the keys are: SPACE pause and resume, `+` / `-` twice or half the speed, the right and
left arrows 10 simulated seconds forward or back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.geometry import quat
from fleetsim.objects import SimObject
from fleetsim.recording.reader import Frame, Recording

ROBOT_HALF = (0.3, 0.3, 0.15)  # a robot's box: 0.6 x 0.6 x 0.3 m
ROBOT_RGBA = (0.2, 0.45, 0.9, 1.0)
SEEK_S = 10.0
KEY_PAUSE, KEY_FASTER, KEY_FASTER_2, KEY_SLOWER = 32, ord("+"), ord("="), ord("-")
KEY_FORWARD, KEY_BACK = 65296, 65295  # PyBullet's right and left arrows


@dataclass
class PlayResult:
    """What a replay showed: frames and the simulated span."""

    frames: int
    start: float
    end: float


class Replay:
    """A recording played back in a simulation: the static world as recorded, a box per robot, frame
    by frame at the recorded pace."""

    def __init__(self, recording: Recording, sim: MultiRobotSimulationCore) -> None:
        self.recording, self.sim = recording, sim
        self.robots: dict[str, SimObject] = {}
        self.speed = 1.0
        self.paused = False
        self._static()
        # the recorded scans (a few robots'), shown as red points at each frame
        self.scans = {robot: list(recording.scans(robot)) for robot in recording.scanned()}
        self._scan_times = {r: np.array([s.time for s in v]) for r, v in self.scans.items()}
        self._drawn: dict[str, int] = {}  # robot -> its points' drawing
        self.scans_shown = 0
        # and their safety fields: per robot, (times, loops at each)
        self.fields: dict[str, tuple[list[float], list[Any]]] = {}
        for when, robot, loops in recording.fields():
            times, shown = self.fields.setdefault(robot, ([], []))
            times.append(when)
            shown.append(loops)
        self._lines: dict[tuple[str, int], list[int]] = {}  # (robot, loop) -> its lines
        self.fields_shown = 0

    def _static(self) -> None:
        """The static boxes of the first scene update (the floor included)."""
        centres, sizes, yaws = self.recording.static_boxes()
        if len(centres):
            SimObject.static_boxes(centres, np.maximum(sizes / 2, 1e-3), yaws, sim_core=self.sim)

    def show(self, frame: Frame) -> None:
        """Put every robot where `frame` has it (boxes for robots new to the replay)."""
        new = [name for name in frame.names if name not in self.robots]
        if new:
            boxes = SimObject.static_boxes(
                np.zeros((len(new), 3)),
                np.tile(ROBOT_HALF, (len(new), 1)),
                np.zeros(len(new)),
                sim_core=self.sim,
                rgba_color=ROBOT_RGBA,
            )
            self.robots.update(zip(new, boxes, strict=True))
        bodies = [self.robots[name] for name in frame.names]
        self.sim.set_poses(bodies, frame.xyz, quat.from_yaw(frame.yaw))
        self._show_scans(frame.time)

    def _show_scans(self, now: float) -> None:
        """Each scanned robot's latest scan by `now`, as points (drawn in the window only)."""
        gui = self.sim.world.backend.window if self.sim.params.gui else None
        for robot, times in self._scan_times.items():
            k = int(np.searchsorted(times, now + 1e-9)) - 1
            if k < 0:
                continue
            scan = self.scans[robot][k]
            self.scans_shown += 1
            if gui is not None:
                hits = scan.world_points()
                xyz = np.column_stack((hits, np.full(len(hits), scan.pose[2])))
                self._drawn[robot] = gui.points(
                    xyz, (0.9, 0.1, 0.1), 3.0, self._drawn.get(robot, -1)
                )
        for robot, (stamps, loops) in self.fields.items():
            k = int(np.searchsorted(stamps, now + 1e-9)) - 1
            if k < 0:
                continue
            self.fields_shown += 1
            if gui is None:
                continue
            for j, (corners, rgba, thickness) in enumerate(loops[k]):
                old = self._lines.get((robot, j), [])
                self._lines[robot, j] = gui.loop(corners, rgba[:3], 1 + 30 * thickness, old)

    def play(
        self, speed: float = 1.0, start: float = 0.0, until: float | None = None
    ) -> PlayResult:
        """Show the frames from `start` at `speed` x the recorded pace (0: as fast as they
        come) until the end or `until`; in the window, the keys steer it."""
        self.speed = speed
        window = self.sim.world.backend.window if self.sim.params.gui else None
        shown, first, last = 0, None, start
        at = start
        while True:
            seek = None
            wall0, sim0 = time.monotonic(), None
            for frame in self.recording.frames(start=at):
                if until is not None and frame.time > until:
                    return PlayResult(shown, first or start, last)
                sim0 = frame.time if sim0 is None else sim0
                if self.speed > 0:
                    self._wait(wall0 + (frame.time - sim0) / self.speed)
                self.show(frame)
                shown, last = shown + 1, frame.time
                first = frame.time if first is None else first
                seek = self._keys(window, frame.time)
                if seek is not None:
                    break
                if self.paused:
                    seek = self._paused(window, frame.time)
                    if seek is not None:
                        break
                    wall0, sim0 = time.monotonic(), frame.time  # the clock restarts here
            if seek is None:
                return PlayResult(shown, first or start, last)
            at = max(seek, 0.0)

    def _wait(self, until: float) -> None:
        while (left := until - time.monotonic()) > 0:
            time.sleep(min(left, 0.02))

    def _keys(self, window: Any, now: float) -> float | None:
        """Apply the keys pressed; a time to seek to, or None."""
        if window is None:
            return None
        keys = window.triggered_keys()
        if KEY_PAUSE in keys:
            self.paused = not self.paused
        if keys & {KEY_FASTER, KEY_FASTER_2}:
            self.speed = self.speed * 2 if self.speed > 0 else 1.0
        if KEY_SLOWER in keys and self.speed > 0:
            self.speed /= 2
        if KEY_FORWARD in keys:
            return now + SEEK_S
        if KEY_BACK in keys:
            return now - SEEK_S
        return None

    def _paused(self, window: Any, now: float) -> float | None:
        while self.paused and self.sim.world.backend.is_open:
            time.sleep(0.03)
            seek = self._keys(window, now)
            if seek is not None:
                return seek
        return None
