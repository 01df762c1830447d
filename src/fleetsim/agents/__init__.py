"""Agents: robots loaded from URDF that drive to goals, follow paths and run actions."""

from fleetsim.agents.agent import Agent, AgentController
from fleetsim.agents.grid import GridSpawnParams
from fleetsim.agents.manager import AgentManager, SimObjectManager
from fleetsim.agents.params import AgentSpawnParams

__all__ = [
    "Agent",
    "AgentController",
    "AgentManager",
    "AgentSpawnParams",
    "GridSpawnParams",
    "SimObjectManager",
]
