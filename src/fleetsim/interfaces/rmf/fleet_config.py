"""A starter config for RMF's demo fleet adapter, from a site that places robots (an Open-RMF
building's `spawn_robot_name`) and a robot model: the fleet's limits (fleetsim's defaults for
the model), its footprint (measured from the model's collision box), each robot with its
charger (the node it starts on when that is a charger, else the nearest charger), the address
of `fleetsim rmf` as the `fleet_manager` section rmf_demos' adapter reads (`ip`, `port`,
`user`, `password`; `prefix` too, for adapters written from RMF's tutorial), and
`reference_coordinates` for every level (fleetsim's robots use RMF's own coordinates, so the
points are the same in both frames). The battery, mechanical and power figures are
placeholders to edit."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

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


def fleet_config(
    site: Site,
    model: str = "mobile_robot",
    fleet_name: str | None = None,
    fleet_manager: str = "http://127.0.0.1:22011",
) -> dict[str, Any]:
    """A starter configuration for RMF's demo fleet adapter: the robots the building places, their
    chargers, limits and footprint, the fleet manager's address and each level's reference
    coordinates."""
    if not site.spawns:
        raise ConfigError(
            "the site places no robots (an Open-RMF building's spawn_robot_name "
            "on a vertex); a fleet config lists the fleet's robots"
        )
    graph = site.graph
    chargers = graph.nodes_with("charger")
    if not chargers:
        raise ConfigError(
            "the site has no charger vertices (is_charger); RMF's fleet adapter "
            "needs one for each robot"
        )
    charger_xy = graph.xy[[graph.node(c) for c in chargers]]
    robots = {}
    for spawn in site.spawns:
        k = graph.node(spawn.node)
        if graph.properties["charger"][k]:
            charger = spawn.node
        else:
            charger = chargers[int(np.argmin(np.hypot(*(charger_xy - graph.xy[k]).T)))]
        robots[spawn.robot_name] = {"charger": charger}
    address = fleet_manager_address(fleet_manager)
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
            "finishing_request": "park",
            "robots": robots,
            "robot_state_update_frequency": 10.0,
        },
        "fleet_manager": {
            **address,
            "user": "",
            "password": "",
            "robot_state_update_frequency": 10.0,
        },
        "reference_coordinates": {
            level: {"rmf": SAME_POINTS, "robot": SAME_POINTS} for level in graph.level_names
        },
    }


SAME_POINTS = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]


def fleet_manager_address(url: str) -> dict[str, Any]:
    """`{ip, port, prefix}` of `fleetsim rmf`'s address (`http://HOST:PORT`)."""
    parts = urlsplit(url if "//" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise ConfigError(
            f"--fleet-manager {url!r}: expected http://HOST:PORT, such as http://127.0.0.1:22011"
        )
    return {"ip": parts.hostname, "port": port, "prefix": f"http://{parts.netloc}"}
