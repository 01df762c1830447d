"""Small worlds for the continuous task's tests: a site from a graph and robots 3 m apart."""

from __future__ import annotations

from typing import Any

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.site import Site


def world(
    count: int, nodes: list[dict[str, Any]], lanes: list[dict[str, Any]]
) -> tuple[MultiRobotSimulationCore, list[Agent]]:
    """A simulation (0.1 s steps) of the graph `nodes`, `lanes` and `count` mobile robots
    r0, r1, ... at (0, 3k)."""
    sim = MultiRobotSimulationCore(SimulationParams(timestep=0.1))
    sim.set_site(Site.from_graph(nodes, lanes))
    robots = [
        Agent.from_params(AgentSpawnParams("mobile_robot", name=f"r{k}",
                                           initial_pose=Pose.from_xyz(0, 3.0 * k, 0)), sim)
        for k in range(count)
    ]  # fmt: skip
    return sim, robots
