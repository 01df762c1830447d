"""A starter config for RMF's demo fleet adapter, from a site that places robots (an Open-RMF
building's `spawn_robot_name`) and a robot model: the fleet's limits (fleetsim's defaults for
the model), its footprint (measured from the model's collision box), each robot with its
charger (the node it starts on when that is a charger, else the nearest charger), and the
address of `fleetsim rmf` as its fleet manager. The battery, mechanical and power figures are
placeholders to edit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.core import MultiRobotSimulationCore, SimulationParams
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.site import Site


def footprint_of(model: str) -> float:
    """The radius (m) of the circle around the model's collision box, seen from above."""
    with MultiRobotSimulationCore(SimulationParams(gui=False)) as sim:
        robot = Agent.from_urdf(model, Pose.from_xyz(0, 0, 0), sim_core=sim)
        bodies = sim.world.bodies
        k = bodies.row(robot.handle)
        size = np.asarray(bodies["aabb_local_max"][k]) - np.asarray(bodies["aabb_local_min"][k])
        return float(math.hypot(size[0], size[1]) / 2)


def fleet_config(site: Site, model: str = "mobile_robot", fleet_name: str | None = None,
                 fleet_manager: str = "http://127.0.0.1:22011") -> dict[str, Any]:  # fmt: skip
    if not site.spawns:
        raise ConfigError("the site places no robots (an Open-RMF building's spawn_robot_name "
                          "on a vertex); a fleet config lists the fleet's robots")  # fmt: skip
    graph = site.graph
    chargers = graph.nodes_with("charger")
    if not chargers:
        raise ConfigError("the site has no charger vertices (is_charger); RMF's fleet adapter "
                          "needs one for each robot")  # fmt: skip
    charger_xy = graph.xy[[graph.node(c) for c in chargers]]
    robots = {}
    for spawn in site.spawns:
        k = graph.node(spawn.node)
        if graph.properties["charger"][k]:
            charger = spawn.node
        else:
            charger = chargers[int(np.argmin(np.hypot(*(charger_xy - graph.xy[k]).T)))]
        robots[spawn.robot_name] = {"charger": charger}
    limits = AgentSpawnParams()
    footprint = footprint_of(model)
    name = fleet_name or site.spawns[0].robot_type or "fleet"
    return {
        "rmf_fleet": {
            "name": name,
            "limits": {
                "linear": [limits.max_linear_vel, limits.max_linear_accel],
                "angular": [limits.max_angular_vel, limits.max_angular_accel],
            },
            "profile": {"footprint": round(footprint, 3), "vicinity": round(footprint + 0.2, 3)},
            "reversible": True,
            "battery_system": {"voltage": 12.0, "capacity": 24.0, "charging_current": 5.0},
            "mechanical_system": {
                "mass": 20.0,
                "moment_of_inertia": 10.0,
                "friction_coefficient": 0.22,
            },
            "ambient_system": {"power": 20.0},
            "tool_system": {"power": 0.0},
            "recharge_threshold": 0.10,
            "recharge_soc": 1.0,
            "publish_fleet_state": 10.0,
            "account_for_battery_drain": True,
            "task_capabilities": {"loop": True, "delivery": True},
            "robots": robots,
        },
        "fleet_manager": {"prefix": fleet_manager, "user": "", "password": ""},
    }
