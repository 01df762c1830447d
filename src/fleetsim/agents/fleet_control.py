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
    _override: float = 1.0  # a fleet manager's speed override
    _held: bool = False  # held by a fleet manager
    _fault_scale: float = 1.0  # a fault's speed factor (0: stopped or broken down)

    def _agent_row(self) -> int:
        if self._motion < 0:
            raise ConfigError(f"{self.name} has a fixed base: it has no motion to control")
        return self._world.motion.agents.row(self._motion)

    def _apply_speed(self) -> None:
        """The speed the controller drives at: the override (0 while held) times the fault's."""
        scale = (0.0 if self._held else self._override) * self._fault_scale
        agents, row = self._world.motion.agents, self._agent_row()
        agents["command_scale"][row] = scale
        agents["speed_scale"][row] = scale * agents["safety_scale"][row]

    @property
    def speed_override(self) -> float:
        """The fraction (0..1) of its speed limits a fleet manager lets the robot drive at now
        (0 while held); a fault's slow-down is not in it (see `fault_speed`)."""
        self._agent_row()
        return 0.0 if self._held else self._override

    def set_speed_override(self, factor: float) -> None:
        """Drive at `factor` (0 < factor <= 1) of the robot's linear and turning speed limits
        (a fleet manager slowing a robot down); accelerations are unchanged. While held, it
        applies on release."""
        if not (isinstance(factor, int | float) and math.isfinite(factor) and 0 < factor <= 1):
            raise ConfigError(f"the speed override must be in (0, 1], got {factor!r}")
        self._agent_row()
        self._override = float(factor)
        self._apply_speed()

    @property
    def is_held(self) -> bool:
        """Whether a fleet manager holds the agent (`hold()`)."""
        return self._motion >= 0 and self._held

    def hold(self) -> None:
        """Stop within the acceleration limits and stay, keeping the goal and queued actions
        (traffic control holding a robot); `release()` drives on."""
        self._agent_row()
        self._held = True
        self._apply_speed()

    def release(self) -> None:
        """Drive on after `hold()`, at the speed override from before."""
        self._agent_row()
        self._held = False
        self._apply_speed()

    @property
    def fault_speed(self) -> float:
        """The speed factor a fault imposes (1: none; 0: stopped, or broken down)."""
        return self._fault_scale

    def set_fault_speed(self, factor: float) -> None:
        """A fault's speed factor, 0..1, on top of any override (`fleetsim.faults` sets it):
        0 stops the robot within its deceleration, keeping its goal and actions, as a robot
        that stalls does; 1 ends the fault."""
        if not (isinstance(factor, int | float) and math.isfinite(factor) and 0 <= factor <= 1):
            raise ConfigError(f"a fault's speed factor must be in [0, 1], got {factor!r}")
        row = self._agent_row()
        self._fault_scale = float(factor)
        self._world.motion.agents["fault_scale"][row] = self._fault_scale
        self._apply_speed()

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
