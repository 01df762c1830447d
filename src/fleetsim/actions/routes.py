"""`GoTo`: drive to a named place of the site along its lanes (a route on the graph)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fleetsim.actions.door_route import DoorsOnRoute
from fleetsim.actions.motion import MoveTo
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.geometry import Path, Pose

if TYPE_CHECKING:
    from fleetsim.agents import Agent


class GoTo(MoveTo):
    """Route from the node nearest the robot to `node` (a name or index) and drive the route.

    The route is planned when the action starts (the robot may have moved since it was queued);
    `route` holds it then. It ends FAILED when there is no site or no route, with the reason.
    """

    def __init__(self, node: str | int, tolerance: float = 0.05) -> None:
        if not isinstance(node, str | int) or isinstance(node, bool):
            raise ConfigError(f"GoTo needs a node name or index, got {node!r}")
        super().__init__(Pose(), tolerance)
        self.node = node
        self.route: list[str] = []

    def start(self, agent: Agent) -> None:
        """Plan a route from the node nearest the agent to the target node and start driving it
        (FAILED without a site, for an unknown node or when there is no route)."""
        site = agent.world.site
        if not agent.drives:
            self.fail(f"{agent.name} has a fixed base and cannot drive")
            return
        if site is None:
            self.fail("no site: load one first (sim.set_site(...) or `site:` in the scenario)")
            return
        graph = site.graph
        here = agent.get_pose()
        try:
            end = self._route_end(agent)
            start = graph.nearest_node(here.x, here.y, site.level_at(here.z))  # its own floor
            route = graph.route(start, end)
        except FleetSimError as exc:
            self.fail(str(exc))
            return
        if len({int(graph.level[k]) for k in route.nodes}) > 1:
            goal = graph.names[route.nodes[-1]]
            self.fail(
                f"the route to '{goal}' changes floor by lift: robots ride lifts under "
                "the fleet manager (go_to keeps to one floor)"
            )
            return
        self.route = [graph.names[k] for k in route.nodes]
        goal_yaw = float(graph.yaw[route.nodes[-1]])
        poses = []
        for k, (x, y) in enumerate(route.positions.tolist()):
            last = k == len(route.nodes) - 1
            yaw = goal_yaw if last and math.isfinite(goal_yaw) else here.yaw
            poses.append(Pose.from_yaw(x, y, here.z, yaw))
        self.align_orientation = math.isfinite(goal_yaw)
        # The leg to the first node has no lane (yet); then each lane's own limit.
        self._limits = [math.inf, *route.speed_limits.tolist()]
        self._route_done(poses)
        self.target = Path(poses)
        self._poses = poses
        self._doors = DoorsOnRoute(agent, graph, list(route.nodes))
        self.polls = bool(self._doors.crossings)  # (woken on arrival only, without doors)
        self._drive(agent)

    def _route_end(self, agent: Agent) -> str | int:
        """The node the route ends at (an unknown name raises, naming it)."""
        agent.world.site.graph.node(self.node)  # type: ignore[union-attr]
        return self.node

    def _route_done(self, poses: list[Pose]) -> None:
        """The route planned as `poses` (one a node, the last one's yaw the goal's when it has
        one): a subclass may add to them (and to `_limits`) before the robot drives."""

    def _drive(self, agent: Agent) -> None:
        """Drive to the next closed door on the route (asked to open), or to the end."""
        stop = self._doors.stop_before()
        end = len(self._poses) if stop is None else stop + 1
        start = self._doors.driven
        poses, limits = self._poses[start:end], self._limits[start:end]
        if start > 0:  # from the node it waited at: that leg has no lane of its own
            limits = [math.inf, *limits[1:]]
        agent.set_path(
            Path(poses), self.tolerance, self.align_orientation if stop is None else False, limits
        )
        self._doors.driven = end - 1

    def update(self, agent: Agent, dt: float) -> None:
        """Drive on (stopping short of doors that are not open yet); complete at the last node."""
        self._doors.let_go_passed(agent)
        if not agent.is_goal_reached():
            return
        if self._doors.driven < len(self._poses) - 1:
            if self._doors.open_ahead():
                self._drive(agent)
            return
        self._doors.let_go_all()
        self.complete()

    def stop(self, agent: Agent) -> None:
        """Stop the agent and let go of the doors it held."""
        doors = getattr(self, "_doors", None)
        if doors is not None:
            doors.let_go_all()
        super().stop(agent)
