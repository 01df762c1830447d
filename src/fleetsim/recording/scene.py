"""`SceneWriter`: the world around the robots as `foxglove.SceneUpdate`s.

The first update carries the static world: a floor, every static body as a box (its collision
box, posed), and the site's lanes and named places. Later updates carry only the other bodies
(loads, carts, shelves that move) that appeared or moved since the last one, and deletions for
bodies that were removed. Robots are not here: they are `/fleet`, one message for all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.geometry import quat
from fleetsim.recording.schemas import foxglove
from fleetsim.state.bodies import CollisionMode

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore

MAX_LABELS = 2000  # named places written as text (more would swamp the 3D view)
MAX_LANES = 200_000  # lanes drawn (a big grid map's millions: its blocked cells show the map)
FLOOR_MARGIN_M = 2.0
GREY, SAND, BLUE, WHITE = (
    (0.6, 0.6, 0.62, 1.0),
    (0.85, 0.7, 0.45, 1.0),
    (0.3, 0.5, 0.9, 0.8),
    (1.0, 1.0, 1.0, 1.0),
)


def _set_pose(pose: Any, position: np.ndarray, orientation: np.ndarray) -> None:
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    o = pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in orientation)


def _set_color(color: Any, rgba: tuple[float, float, float, float]) -> None:
    color.r, color.g, color.b, color.a = rgba


class SceneWriter:
    """The `/scene` messages: the static world and the site once, and the other bodies (loads,
    carts) when they appear, move or go."""

    def __init__(self, sim: MultiRobotSimulationCore) -> None:
        self.sim = sim
        # Bodies written so far: handles (sorted) and the pose (pos + quat) last written.
        self._sent_handles = np.empty(0, dtype=np.int64)
        self._sent_poses = np.empty((0, 7))
        self._gone: list[int] = []
        self._others: np.ndarray | None = None  # rows of the bodies that are neither
        self._others_size = 0  # (the body count they were found at)

    def spawned(self) -> None:
        """Bodies were spawned: they are sent with the next frame."""
        self._others = None

    def removed(self, obj: Any) -> None:
        """`obj` was removed: its entity is deleted with the next frame."""
        self._others = None
        at = np.searchsorted(self._sent_handles, obj.handle)
        if at < len(self._sent_handles) and self._sent_handles[at] == obj.handle:
            self._sent_handles = np.delete(self._sent_handles, at)
            self._sent_poses = np.delete(self._sent_poses, at, axis=0)
            self._gone.append(obj.handle)

    def update(self, first: bool) -> Any | None:
        """The SceneUpdate for this frame, or None when nothing changed."""
        bodies = self.sim.world.bodies
        if self._others is None or self._others_size != len(bodies):
            self._others = np.flatnonzero(
                ~bodies["robot"] & (bodies["collision_mode"] != int(CollisionMode.STATIC))
            )
            self._others_size = len(bodies)
        if not (first or self._gone or len(self._others)):
            return None
        update = foxglove("SceneUpdate")()
        stamp = round(self.sim.sim_time * 1e9)
        if first:
            self._static(update, stamp)
        for handle in self._gone:
            deletion = update.deletions.add(id=f"body/{handle}", type=0)  # 0: matching id
            deletion.timestamp.FromNanoseconds(stamp)
        self._gone = []
        self._moving(update, stamp)
        return update if update.entities or update.deletions else None

    # -- the static world -------------------------------------------------------------------

    def _static(self, update: Any, stamp: int) -> None:
        bodies = self.sim.world.bodies
        static = np.flatnonzero(bodies["collision_mode"] == int(CollisionMode.STATIC))
        entity = update.entities.add(id="static", frame_id="world")
        entity.timestamp.FromNanoseconds(stamp)
        lo, hi = self._extent()
        floor = entity.cubes.add()
        _set_pose(
            floor.pose,
            np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, -0.01]),
            np.array([0.0, 0.0, 0.0, 1.0]),
        )
        floor.size.x, floor.size.y, floor.size.z = float(hi[0] - lo[0]), float(hi[1] - lo[1]), 0.02
        _set_color(floor.color, (0.25, 0.25, 0.27, 1.0))
        for row in static.tolist():
            self._box(entity, row, GREY)
        site = self.sim.site
        if site is not None:
            self._site(update, stamp, site.graph)

    def _extent(self) -> tuple[np.ndarray, np.ndarray]:
        bodies = self.sim.world.bodies
        points = [bodies["aabb_min"][:, :2], bodies["aabb_max"][:, :2]]
        if self.sim.site is not None:
            points.append(self.sim.site.graph.xy)
        stacked = np.concatenate([p for p in points if len(p)] or [np.zeros((1, 2))])
        return stacked.min(axis=0) - FLOOR_MARGIN_M, stacked.max(axis=0) + FLOOR_MARGIN_M

    def _box(self, entity: Any, row: int, rgba: tuple[float, float, float, float]) -> None:
        bodies = self.sim.world.bodies
        lo, hi = bodies["aabb_local_min"][row], bodies["aabb_local_max"][row]
        q = bodies["quat"][row]
        centre = bodies["pos"][row] + quat.rotate(q, (lo + hi) / 2)
        cube = entity.cubes.add()
        _set_pose(cube.pose, centre, q)
        size = np.maximum(hi - lo, 1e-3)
        cube.size.x, cube.size.y, cube.size.z = (float(v) for v in size)
        _set_color(cube.color, rgba)

    def _site(self, update: Any, stamp: int, graph: Any) -> None:
        entity = update.entities.add(id="site", frame_id="world")
        entity.timestamp.FromNanoseconds(stamp)
        lanes = entity.lines.add(type=2, thickness=0.05)  # 2: LINE_LIST, a segment per pair
        _set_color(lanes.color, BLUE)
        lanes.pose.orientation.w = 1.0
        if graph.lane_count > MAX_LANES:
            return
        ends = np.column_stack((graph.lane_from, graph.lane_to)).ravel()
        site = self.sim.site
        floors = np.array(
            [site.elevation(n) if site is not None else 0.0 for n in graph.level_names]
        )  # each level at its height
        heights = floors[np.asarray(graph.level)[ends]] + 0.01
        for (x, y), z in zip(graph.xy[ends].tolist(), heights.tolist(), strict=True):
            lanes.points.add(x=x, y=y, z=z)
        if len(graph.names) > MAX_LABELS:
            return
        for name, (x, y) in zip(graph.names, graph.xy.tolist(), strict=True):
            text = entity.texts.add(text=name, billboard=True, font_size=12.0, scale_invariant=True)
            _set_pose(text.pose, np.array([x, y, 0.3]), np.array([0.0, 0.0, 0.0, 1.0]))
            _set_color(text.color, WHITE)

    # -- bodies that move -------------------------------------------------------------------

    def _moving(self, update: Any, stamp: int) -> None:
        bodies = self.sim.world.bodies
        rows = self._others
        if rows is None or not len(rows):
            return
        handles = np.asarray(bodies.handles[rows], dtype=np.int64)
        poses = np.concatenate([bodies["pos"][rows], bodies["quat"][rows]], axis=1)
        # Only bodies that are new or moved since they were last written become entities.
        at = np.minimum(
            np.searchsorted(self._sent_handles, handles), max(len(self._sent_handles) - 1, 0)
        )
        known = (
            (self._sent_handles[at] == handles)
            if len(self._sent_handles)
            else (np.zeros(len(handles), dtype=bool))
        )
        moved = ~known
        if known.any():
            moved[known] = ~np.all(
                np.abs(self._sent_poses[at[known]] - poses[known]) <= 1e-6, axis=1
            )
        changed = np.flatnonzero(moved)
        for k in changed.tolist():
            entity = update.entities.add(id=f"body/{handles[k]}", frame_id="world")
            entity.timestamp.FromNanoseconds(stamp)
            self._box(entity, int(rows[k]), SAND)
        if changed.size:
            order = np.argsort(handles)
            self._sent_handles, self._sent_poses = handles[order], poses[order]
