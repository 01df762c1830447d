"""`FleetControl`: what a fleet manager needs of each robot: hold and release, a speed
override, and where on the site the robot is (its lane and node)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.objects import World
from fleetsim.site import NavGraph

NODE_TOLERANCE_M = 0.1


class FleetControl:
    """Mixin for `Agent`; expects `_world`, `name`, `_motion` and `get_pose()`."""

    _world: World
    name: str
    _motion: int
    _released_override: float = 1.0

    def _agent_row(self) -> int:
        if self._motion < 0:
            raise ConfigError(f"{self.name} has a fixed base: it has no motion to control")
        return self._world.motion.agents.row(self._motion)

    @property
    def speed_override(self) -> float:
        """The fraction (0..1) of its speed limits the robot drives at now (0 while held)."""
        return float(self._world.motion.agents["speed_scale"][self._agent_row()])

    def set_speed_override(self, factor: float) -> None:
        """Drive at `factor` (0 < factor <= 1) of the robot's linear and turning speed limits
        (a fleet manager slowing a robot down); accelerations are unchanged."""
        if not (isinstance(factor, int | float) and math.isfinite(factor) and 0 < factor <= 1):
            raise ConfigError(f"the speed override must be in (0, 1], got {factor!r}")
        row = self._agent_row()
        if self.is_held:
            self._released_override = float(factor)  # applies on release
        else:
            self._world.motion.agents["speed_scale"][row] = float(factor)

    @property
    def is_held(self) -> bool:
        """Whether a fleet manager holds the agent (`hold()`, speed override 0)."""
        return self._motion >= 0 and self.speed_override == 0.0

    def hold(self) -> None:
        """Stop within the acceleration limits and stay, keeping the goal and queued actions
        (traffic control holding a robot); `release()` drives on."""
        if not self.is_held:
            row = self._agent_row()
            self._released_override = float(self._world.motion.agents["speed_scale"][row])
            self._world.motion.agents["speed_scale"][row] = 0.0

    def release(self) -> None:
        """Drive on after `hold()`, at the speed override from before."""
        if self.is_held:
            self._world.motion.agents["speed_scale"][self._agent_row()] = self._released_override

    def current_node(self, tolerance: float = NODE_TOLERANCE_M) -> str | None:
        """The site node the robot is on (within `tolerance` metres), or None."""
        graph = self._site_graph()
        x, y = self.get_pose().position[:2]
        node = graph.nearest_node(x, y)
        return graph.names[node] if math.hypot(*(graph.xy[node] - (x, y))) <= tolerance else None

    def current_lane(self) -> tuple[int, float]:
        """The index of the site lane nearest the robot, and its distance from it (m)."""
        graph = self._site_graph()
        lanes, dist = graph.lane_at(np.array([self.get_pose().position[:2]]))
        return int(lanes[0]), float(dist[0])

    def _site_graph(self) -> NavGraph:
        site = self._world.site
        if site is None:
            raise ConfigError("the simulation has no site (sim.set_site or site: in a scenario)")
        return site.graph

    if TYPE_CHECKING:

        def get_pose(self) -> Pose:  # provided by SimObject
            """The agent's pose (its `SimObject`'s)."""
