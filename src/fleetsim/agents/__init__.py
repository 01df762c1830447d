"""Agents: robots loaded from URDF that drive to goals, follow paths and run actions."""

from fleetsim.agents.agent import Agent, AgentController
from fleetsim.agents.params import AgentSpawnParams

__all__ = ["Agent", "AgentController", "AgentSpawnParams"]
