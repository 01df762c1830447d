"""Core: `MultiRobotSimulationCore`, `SimulationParams`, the step phases, pacing and profiling."""

from fleetsim.core.pacer import Pacer
from fleetsim.core.params import SimulationParams
from fleetsim.core.profiler import PROFILE_KEYS, StepProfiler
from fleetsim.core.simulation import EVENTS, MultiRobotSimulationCore

__all__ = [
    "EVENTS",
    "PROFILE_KEYS",
    "MultiRobotSimulationCore",
    "Pacer",
    "SimulationParams",
    "StepProfiler",
]
