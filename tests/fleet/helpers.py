"""`fleet_of`: mobile robots placed on named nodes of the simulation's site."""

from __future__ import annotations

from fleetsim import Agent, MultiRobotSimulationCore, Pose


def fleet_of(sim: MultiRobotSimulationCore, *nodes: str) -> list[Agent]:
    graph = sim.site.graph  # type: ignore[union-attr]
    out = []
    for k, node in enumerate(nodes):
        x, y = graph.xy[graph.node(node)]
        pose = Pose.from_xyz(float(x), float(y), 0)
        robot = Agent.from_urdf("mobile_robot", pose, sim_core=sim, name=f"amr{k}")
        out.append(robot)
    return out
