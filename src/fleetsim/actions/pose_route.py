"""`GoToPose`: drive to a pose anywhere on the site: along its lanes to the node nearest the
pose, then straight to it (what a navigation goal such as ROS 2's NavigateToPose asks); and
`obstacle_at`, which says when a pose is inside a wall or a blocked cell."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.actions.motion import MoveTo
from fleetsim.actions.routes import GoTo
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose

if TYPE_CHECKING:
    from fleetsim.agents import Agent
    from fleetsim.site import Site

SAME_M = 0.02  # a goal this close to its route's last node ends there (no extra leg)


class GoToPose(GoTo):
    """Route over the site's lanes, on the robot's floor, from the node nearest the robot to
    the node nearest (x, y), then straight to (x, y), ending on `yaw`. Without a site: straight
    there. `remaining()` is the distance left along the way (m)."""

    def __init__(self, x: float, y: float, yaw: float, tolerance: float = 0.05) -> None:
        values = (x, y, yaw, tolerance)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            raise ConfigError(f"GoToPose needs finite x, y, yaw and tolerance, got {values}")
        super().__init__(0, tolerance)
        self.goal = (float(x), float(y), float(yaw))
        self._straight = False

    def start(self, agent: Agent) -> None:
        """Plan the route and drive it (straight to the goal without a site)."""
        if agent.world.site is not None or not agent.drives:
            super().start(agent)
            return
        self._straight = True
        x, y, yaw = self.goal
        self.target = Pose.from_yaw(x, y, agent.get_pose().z, yaw)
        MoveTo.start(self, agent)

    def update(self, agent: Agent, dt: float) -> None:
        """Drive on; complete at the goal."""
        if self._straight:
            MoveTo.update(self, agent, dt)
        else:
            super().update(agent, dt)

    def _route_end(self, agent: Agent) -> str | int:
        site = agent.world.site
        assert site is not None
        level = site.level_at(agent.get_pose().z)
        return site.graph.nearest_node(self.goal[0], self.goal[1], level)

    def _route_done(self, poses: list[Pose]) -> None:
        x, y, yaw = self.goal
        last = poses[-1]
        final = Pose.from_yaw(x, y, last.z, yaw)
        if math.hypot(last.x - x, last.y - y) <= SAME_M:
            poses[-1] = final
        else:
            poses.append(final)
            self._limits.append(math.inf)  # (off the lanes: the robot's own limit)
        self.align_orientation = True

    def remaining(self, agent: Agent) -> float:
        """The distance (m) from the robot along what is left of the way to the goal."""
        here = np.array(agent.get_pose().position[:2])
        target = self.target
        points = [target] if isinstance(target, Pose) else list(target)
        xy = np.array([[p.x, p.y] for p in points])
        ahead = _ahead(here, xy)
        legs = np.vstack((here, xy[ahead:]))
        return float(np.linalg.norm(np.diff(legs, axis=0), axis=1).sum())


def _ahead(here: np.ndarray, xy: np.ndarray) -> int:
    """The first of the way's points not yet passed: the end of the leg nearest the robot."""
    if len(xy) < 2:
        return 0
    a, b = xy[:-1], xy[1:]
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", here - a, ab) / np.maximum((ab * ab).sum(1), 1e-12), 0, 1)
    nearest = a + t[:, None] * ab
    return int(np.argmin(np.linalg.norm(nearest - here, axis=1))) + 1


def obstacle_at(site: Site | None, x: float, y: float, z: float, clearance: float = 0.0) -> str:
    """What fixed obstacle of the site (x, y) on the floor at height `z` is inside, within
    `clearance` metres ("" when none): walls and blocked cells, as the boxes they are built as."""
    if site is None or not len(site.obstacles):
        return ""
    o = site.obstacles
    spans = (o.centres[:, 2] - o.half_extents[:, 2] <= z + 0.3) & (
        o.centres[:, 2] + o.half_extents[:, 2] >= z + 0.05
    )
    d = np.array([x, y]) - o.centres[:, :2]
    c, s = np.cos(o.yaws), np.sin(o.yaws)
    local = np.stack((c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]), axis=1)
    inside = spans & np.all(np.abs(local) <= o.half_extents[:, :2] + clearance, axis=1)
    hits = np.flatnonzero(inside)
    if not len(hits):
        return ""
    k = int(hits[0])
    cx, cy = o.centres[k, :2].tolist()
    return f"a wall or blocked cell (the obstacle centred at ({cx:.2f}, {cy:.2f}))"
