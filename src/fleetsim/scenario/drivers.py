"""Taking out of a scenario what would drive its robots besides an outside fleet manager (the
scenario's own fleet manager, motion plugins, start actions): for serving its robots to a VDA
5050 master control or Open-RMF, and for fuzzing an outside manager."""

from __future__ import annotations

from fleetsim.scenario.schema import Scenario

DRIVERS = ("fleet_manager", "patrol", "random_goals", "shuttle")  # plugins that move robots


def without_drivers(scenario: Scenario) -> list[str]:
    """Take out of `scenario` what would drive its robots besides the master control (the
    fleet manager, motion plugins, start actions); returns what was taken out."""
    removed = [p.type or "" for p in scenario.plugins if p.type in DRIVERS]
    scenario.plugins = [p for p in scenario.plugins if p.type not in DRIVERS]
    for robot in scenario.robots:
        removed += [p.type or "" for p in robot.plugins if p.type in DRIVERS]
        robot.plugins = [p for p in robot.plugins if p.type not in DRIVERS]
        if robot.actions:
            removed.append("start actions")
            robot.actions = []
    return removed
