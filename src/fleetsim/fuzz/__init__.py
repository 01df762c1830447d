"""Fuzzing: many seeded runs with faults, checked; the failing ones kept as scenarios that make
them again, and shrunk to the smallest run that still fails the same check.

- `checks` (`parse_checks`, `Check`): what a run must not do, and when it first did;
- `run` (`fuzz_one`): one run, checked;
- `keep` (`kept_scenario`): a failing run as a self-contained scenario file;
- `shrink` (`Shrinker`, `ddmin`): fewer faults, robots and seconds, each step confirmed;
- `driver` (`fuzz_specs`, `run_fuzz`): the runs on the sweep engine, the failures kept.
"""

from fleetsim.fuzz.checks import Check, parse_checks
from fleetsim.fuzz.driver import FuzzResult, faults_of, fuzz_specs, run_fuzz
from fleetsim.fuzz.keep import kept_scenario
from fleetsim.fuzz.run import fuzz_one
from fleetsim.fuzz.shrink import Shrinker, ddmin

__all__ = [
    "Check",
    "FuzzResult",
    "Shrinker",
    "ddmin",
    "faults_of",
    "fuzz_one",
    "fuzz_specs",
    "kept_scenario",
    "parse_checks",
    "run_fuzz",
]
