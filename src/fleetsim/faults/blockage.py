"""`LaneBlockage`: what blocks a lane while a `lane_blocked` fault lasts, a pallet-sized static
box on the lane, in the way of any robot that drives along it and of no other lane: it goes
where the lane is farthest from the others (in its middle half), as big as leaves a robot room
to drive them.

It appears as soon as nothing is in the way: no robot on the lane (within its footprint of the
lane's line, short of its end nodes) and none where the box goes. Robots that had entered the
lane when it was blocked so drive off it first; robots standing on its end nodes do not keep
it away. A robot that drives onto the lane after that runs into it: fleet software that does
not route round a closed lane is found out by a collision (`robot-structure`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore
from fleetsim.geometry import Pose, ShapeParams
from fleetsim.objects import SimObject, SimObjectSpawnParams
from fleetsim.site import NavGraph
from fleetsim.state import CollisionMode

HALF_SIZE = (0.3, 0.4, 0.25)  # along the lane, across it, up (m): a pallet's load
CLEAR_M = 0.2  # space kept between the box and any robot when it appears
END_M = 0.3  # a robot this close to an end node stands there, not on the lane
MIN_SCALE = 0.25  # the box shrinks to leave other lanes free, but not below this


def _to_segments(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances from point `p` (2,) to segments `a` -> `b` (N, 2)."""
    ab = b - a
    t = np.clip(((p - a) * ab).sum(axis=1) / np.maximum((ab * ab).sum(axis=1), 1e-12), 0, 1)
    d = p - (a + t[:, None] * ab)
    out: np.ndarray = np.hypot(d[:, 0], d[:, 1])
    return out


class LaneBlockage:
    """The box that blocks lane `a` -> `b` of `graph`, once `place()` finds the way clear."""

    def __init__(
        self,
        sim: MultiRobotSimulationCore,
        graph: NavGraph,
        a: int,
        b: int,
        robots: Sequence[Agent],
        name: str,
    ) -> None:
        self.sim, self.robots, self.name = sim, list(robots), name
        self.ends = graph.xy[[a, b]].astype(np.float64)
        along = self.ends[1] - self.ends[0]
        self.yaw = math.atan2(along[1], along[0])
        self.box: SimObject | None = None
        self._handles = sim.handles_of(self.robots)
        bodies = sim.world.bodies
        rows = bodies.rows(self._handles)
        self.radius = float(bodies.footprint_radii(rows).max()) if len(rows) else 0.0
        self._z = self._floor(graph, a, bodies["pos"][rows, 2])
        self.middle, self.half_size = self._spot(graph, a, b)

    def _floor(self, graph: NavGraph, a: int, z: np.ndarray) -> float:
        """The height the box stands at: the lane's floor, plus how high a robot's origin is
        above its own floor (a site of one level: the lowest robot's height)."""
        site = self.sim.site
        if site is None or len(graph.level_names) < 2 or not len(z):
            return float(z.min()) if len(z) else 0.0
        above = float(z[0]) - site.elevation(site.level_at(float(z[0])))
        return site.elevation(graph.level_names[int(graph.level[a])]) + above

    def _spot(self, graph: NavGraph, a: int, b: int) -> tuple[np.ndarray, tuple[float, ...]]:
        """Where on the lane the box goes, and its half sizes: the point of its middle half
        farthest from every other lane, the box no bigger than leaves a robot room to drive
        those (it blocks this lane only)."""
        others = ~(
            ((graph.lane_from == a) & (graph.lane_to == b))
            | ((graph.lane_from == b) & (graph.lane_to == a))
        )
        p0, p1 = graph.xy[graph.lane_from[others]], graph.xy[graph.lane_to[others]]
        best, room = self.ends.mean(axis=0), math.inf
        for t in np.linspace(0.25, 0.75, 11):
            spot = self.ends[0] + t * (self.ends[1] - self.ends[0])
            gap = float(_to_segments(spot, p0, p1).min()) if len(p0) else math.inf
            if gap > room or room == math.inf:
                best, room = spot, gap
        nominal = math.hypot(HALF_SIZE[0], HALF_SIZE[1])
        fits = (room - self.radius - CLEAR_M) / nominal
        scale = min(1.0, max(fits, MIN_SCALE))
        return best, (HALF_SIZE[0] * scale, HALF_SIZE[1] * scale, HALF_SIZE[2])

    @property
    def placed(self) -> bool:
        """Whether the box is on the lane now."""
        return self.box is not None

    def clear(self) -> bool:
        """Whether nothing is in the way: no robot on the lane or where the box goes."""
        if not self.robots:
            return True
        xy = self.sim.get_poses(self._handles)[0][:, :2]
        a, b = self.ends
        ab = b - a
        t = np.clip(((xy - a) @ ab) / max(float(ab @ ab), 1e-12), 0.0, 1.0)
        off_line = np.hypot(*(xy - (a + t[:, None] * ab)).T)
        at_end = np.minimum(np.hypot(*(xy - a).T), np.hypot(*(xy - b).T)) <= END_M
        on_lane = (off_line < self.radius + CLEAR_M) & ~at_end
        box = math.hypot(self.half_size[0], self.half_size[1])
        under = np.hypot(*(xy - self.middle).T) < self.radius + box + CLEAR_M
        return not bool((on_lane | under).any())

    def place(self) -> bool:
        """Put the box on the lane when the way is clear; whether it is there now."""
        if self.box is None and self.clear():
            shape = ShapeParams(
                "box", half_extents=self.half_size, rgba_color=(0.8, 0.45, 0.1, 1.0)
            )
            pose = Pose.from_euler(
                float(self.middle[0]), float(self.middle[1]), self._z + HALF_SIZE[2], yaw=self.yaw
            )
            params = SimObjectSpawnParams(
                collision_shape=shape,
                initial_pose=pose,
                collision_mode=CollisionMode.STATIC,
                name=self.name,
            )
            self.box = SimObject.from_params(params, sim_core=self.sim)
        return self.box is not None

    def remove(self) -> None:
        """Take the box away (the fault is over)."""
        if self.box is not None:
            self.box.remove()
            self.box = None
