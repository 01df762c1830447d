"""Agents: robots from URDF that drive to goals, follow paths, move joints and run actions."""

from fleetsim.agents.agent import Agent, AgentController
from fleetsim.agents.grid import GridSpawnParams
from fleetsim.agents.ik import IKResult
from fleetsim.agents.ik_params import IKParams
from fleetsim.agents.manager import AgentManager, SimObjectManager
from fleetsim.agents.params import AgentSpawnParams

__all__ = [
    "Agent",
    "AgentController",
    "AgentManager",
    "AgentSpawnParams",
    "GridSpawnParams",
    "IKParams",
    "IKResult",
    "SimObjectManager",
]
