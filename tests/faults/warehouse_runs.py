"""Running the bundled warehouse with overrides, for the fault tests (not a test module)."""

from __future__ import annotations

from typing import Any

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import RunSummary, run_scenario


def run(*overrides: str, duration: float = 240.0) -> tuple[RunSummary, Any]:
    """The warehouse run for `duration` simulated seconds with `overrides` (scenario overrides,
    as `fleetsim run warehouse` takes them): (its summary, its fault injector or None)."""
    built = build(load_scenario("warehouse", [f"simulation.duration={duration}", *overrides]))
    with built.sim:
        summary = run_scenario(built)
        faults = [p for p in built.plugins if type(p).__name__ == "FaultsPlugin"]
        return summary, faults[0].injector if faults else None
