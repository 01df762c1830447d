"""Drive robots along routes on a site and measure what a site's author needs to trust it:
does every route reach its place, do robots stay on the lanes, do they stay out of walls and
blocked cells. `fleetsim site check FILE` runs it from the command line."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from fleetsim.actions import ActionStatus, GoTo
from fleetsim.actions.base import TERMINAL
from fleetsim.agents import Agent
from fleetsim.core import MultiRobotSimulationCore, SimulationParams
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.site import Site

TIME_MARGIN = 3.0  # a route may take this many times its length at the robot's top speed
TIME_SLACK_S = 30.0  # ... plus this (accelerating, turning in place at corners)
WINDOW_LEGS = 16  # legs of a route measured each step, from the one the robot was nearest


@dataclass
class RouteCheck:
    """What `check_routes` measured. `ok` when every route arrived, no robot was ever farther
    than `tolerance_m` from its route's lanes, and none touched a wall or entered a blocked cell."""

    routes: int = 0
    reached: int = 0
    failures: list[str] = field(default_factory=list)
    max_lane_offset_m: float = 0.0
    worst_offset_at: tuple[str, float, float] | None = None  # robot, x, y
    structure_contacts: int = 0  # robot-structure collision episodes (walls, blocked cells)
    contacts: list[tuple[str, float, float]] = field(default_factory=list)  # robot, x, y
    blocked_cell_entries: int = 0  # steps a robot's centre was in a blocked grid cell
    sim_time_s: float = 0.0
    wall_time_s: float = 0.0
    tolerance_m: float = 0.1

    @property
    def ok(self) -> bool:
        """Whether every route arrived, within the tolerance and without a contact."""
        return (
            self.reached == self.routes
            and not self.failures
            and self.max_lane_offset_m <= self.tolerance_m
            and self.structure_contacts == 0
            and self.blocked_cell_entries == 0
        )


def check_routes(
    site: Site,
    robots: int = 10,
    routes: int = 50,
    seed: int = 0,
    model: str = "mobile_robot",
    tolerance: float = 0.1,
    timestep: float = 0.1,
) -> RouteCheck:
    """Start `robots` robots on different nodes, send each along random routes (`go_to`) to
    other nodes, `routes` in all, and measure each step (see `RouteCheck`). Robots drive
    independently (no traffic control), so only contacts with the site's structure count."""
    if robots < 1 or routes < 1:
        raise ConfigError(f"robots and routes must be >= 1, got {robots} and {routes}")
    rng = np.random.default_rng(seed)
    targets = list(range(len(site.graph)))
    if len(targets) < max(2, robots):
        need = max(2, robots)
        raise ConfigError(f"{robots} robots need {need} nodes; the site has {len(targets)}")
    report = RouteCheck(tolerance_m=tolerance)
    started = time.perf_counter()
    params = SimulationParams.from_dict({"timestep": timestep, "target_rtf": 0.0})
    with MultiRobotSimulationCore(params) as sim:
        walls = {id(body) for body in sim.set_site(site)}

        def touched(a: object, b: object) -> None:
            robot = a if isinstance(a, Agent) else b
            if isinstance(robot, Agent) and id(b if robot is a else a) in walls:
                x, y = robot.get_pose().position[:2]
                report.contacts.append((robot.name, round(float(x), 2), round(float(y), 2)))

        sim.on("collision_started", touched)
        starts = rng.choice(targets, size=robots, replace=False).tolist()
        fleet = [
            Agent.from_urdf(model, _pose_at(site, k), sim_core=sim, name=f"check_{i}")
            for i, k in enumerate(starts)
        ]
        driving: list[_Leg | None] = [None] * robots
        sent = 0
        while True:
            for i, robot in enumerate(fleet):
                leg = driving[i]
                if leg is not None and leg.action.status in TERMINAL:
                    _finish(report, robot.name, leg.action)
                    driving[i] = leg = None
                if leg is not None and leg.deadline < sim.sim_time:
                    report.failures.append(f"{robot.name} did not reach {leg.action.node} in time")
                    robot.clear_actions()
                    driving[i] = leg = None
                if leg is None and sent < routes:
                    driving[i] = _send(robot, site, targets, rng)
                    sent += 1
            if all(leg is None for leg in driving):
                break
            sim.step_once()
            for i, robot in enumerate(fleet):
                leg = driving[i]
                if leg is not None and leg.action.route:
                    _measure(report, site, robot, leg, sim.sim_time)
        report.routes = sent
        report.structure_contacts = sim.collision_counts.get("robot-structure", 0)
        report.sim_time_s = sim.sim_time
    report.wall_time_s = time.perf_counter() - started
    return report


@dataclass
class _Leg:
    action: GoTo
    xy: np.ndarray | None = None  # the route's nodes, once planned
    cursor: int = 0  # the leg the robot was nearest at the last measure
    deadline: float = math.inf


def _send(robot: Agent, site: Site, targets: list[int], rng: np.random.Generator) -> _Leg:
    here = site.graph.nearest_node(*robot.get_pose().position[:2])
    goal = here
    while goal == here:
        goal = int(targets[int(rng.integers(len(targets)))])
    return _Leg(robot.go_to(site.graph.names[goal]))


def _pose_at(site: Site, node: int) -> Pose:
    x, y = site.graph.xy[node]
    yaw = float(site.graph.yaw[node])
    return Pose.from_yaw(float(x), float(y), 0.0, yaw if math.isfinite(yaw) else 0.0)


def _finish(report: RouteCheck, name: str, action: GoTo) -> None:
    if action.status is ActionStatus.COMPLETED:
        report.reached += 1
    else:
        report.failures.append(f"{name} to {action.node}: {action.error_message}")


def _measure(report: RouteCheck, site: Site, robot: Agent, leg: _Leg, now: float) -> None:
    graph = site.graph
    if leg.xy is None:  # planned when the action started: set the yardstick and the deadline
        leg.xy = graph.xy[[graph.node(n) for n in leg.action.route]]
        length = float(np.hypot(*np.diff(leg.xy, axis=0).T).sum())
        top = max(robot.spawn_params.max_linear_vel, 1e-3)
        leg.deadline = now + TIME_MARGIN * length / top + TIME_SLACK_S
    p = np.asarray(robot.get_pose().position[:2])
    # The legs around the one it was nearest last step (a route across a big grid map has
    # thousands); the whole route only when that would raise the worst offset: still exact.
    first = max(leg.cursor - 1, 0)
    offset, k = _distance_to_polyline(p, leg.xy[first : first + WINDOW_LEGS + 1])
    if offset > report.max_lane_offset_m:
        first = 0
        offset, k = _distance_to_polyline(p, leg.xy)
    leg.cursor = first + k
    if offset > report.max_lane_offset_m:
        report.max_lane_offset_m = offset
        report.worst_offset_at = (robot.name, float(p[0]), float(p[1]))
    grid = site.grid
    if grid is not None:
        row, col = grid.cell_of(float(p[0]), float(p[1]))
        inside = 0 <= row < grid.height and 0 <= col < grid.width
        if not inside or grid.blocked[row, col]:
            report.blocked_cell_entries += 1


def _distance_to_polyline(p: np.ndarray, xy: np.ndarray) -> tuple[float, int]:
    """The distance from p to the polyline through xy, and the index of the nearest leg."""
    if len(xy) == 1:
        return float(np.hypot(*(p - xy[0]))), 0
    a, b = xy[:-1], xy[1:]
    d = b - a
    t = np.clip(((p - a) * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 1e-12), 0.0, 1.0)
    dist = np.hypot(*(a + t[:, None] * d - p).T)
    k = int(np.argmin(dist))
    return float(dist[k]), k
