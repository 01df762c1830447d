"""Faults: seeded, reproducible things going wrong, injected on purpose (issue 36, in progress).

- `stdrandom` (`StdRandom`): draws as a C++ program built with GCC makes them;
- `delays` (`DelayConfig`, `DelayGenerator`): execution delays as the League of Robot Runners
  kit draws them, interval for interval.
"""

from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.stdrandom import StdRandom

__all__ = ["DelayConfig", "DelayGenerator", "StdRandom"]
