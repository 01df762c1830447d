"""Faults: seeded, reproducible things going wrong, injected on purpose.

- `plan` (`FaultPlan`, `RobotFaults`, `SiteFault`, `SiteFaults`, `FaultEvent`,
  `FaultSchedule`): what goes wrong and when; the same plan and seed give the same events;
- `inject` (`FaultInjector`): the events applied to a simulation, step by step;
- `delays` (`DelayConfig`, `DelayGenerator`): execution delays as the League of Robot Runners
  kit draws them, interval for interval;
- `stdrandom` (`StdRandom`): draws as a C++ program built with GCC makes them.
"""

from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.inject import FaultInjector
from fleetsim.faults.plan import (
    DemandFault,
    FaultEvent,
    FaultPlan,
    FaultSchedule,
    RobotFaults,
    SiteFault,
    SiteFaults,
)
from fleetsim.faults.stdrandom import StdRandom

__all__ = [
    "DelayConfig",
    "DelayGenerator",
    "DemandFault",
    "FaultEvent",
    "FaultInjector",
    "FaultPlan",
    "FaultSchedule",
    "RobotFaults",
    "SiteFault",
    "SiteFaults",
    "StdRandom",
]
