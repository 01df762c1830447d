"""A deliberately weak fleet manager, for `fleetsim fuzz` to break: it sends every robot round
the site's loop, lap after lap, and keeps them apart only by where they start (they all drive
at the same speed). The planted bug: it never looks again, so a robot that stops is run into
by the one behind it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from fleetsim.scenario import Plugin


class SpacedLaps(Plugin):
    """Each robot drives `laps` laps of the loop from its start node, never checking the others."""

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid")
        laps: int = 10

    def initialize(self) -> None:
        graph = self.scene.sim.site.graph
        ring = list(range(len(graph)))  # the loop's nodes, in order (n0, n1, ...)
        for robot in self.scene.robots:
            x, y = robot.get_pose().position[:2]
            first = graph.nearest_node(x, y)
            order = ring[first + 1 :] + ring[: first + 1]
            points = [tuple(graph.xy[n]) for n in order] * self.params.laps
            robot.set_waypoints(
                points, [0.0] * len(points), tolerance=0.05, align_orientation=False
            )
