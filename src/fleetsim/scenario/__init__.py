"""Scenarios: YAML files describing a site and a fleet, plugins, and running them."""

from fleetsim.scenario import builtin as _builtin  # registers patrol, random_goals, shuttle
from fleetsim.scenario import fleet_manager as _fleet_manager  # registers fleet_manager
from fleetsim.scenario.builder import ScenarioRun, Scene, build
from fleetsim.scenario.loader import (
    LoadedScenario,
    ScenarioError,
    bundled_scenarios,
    load_scenario,
    scenario_path,
)
from fleetsim.scenario.plugins import (
    HOOKS,
    Plugin,
    PluginError,
    UnknownPluginError,
    find_plugin,
    register_plugin,
    registered_plugins,
)
from fleetsim.scenario.schema import Scenario, json_schema

__all__ = [
    "HOOKS",
    "LoadedScenario",
    "Plugin",
    "PluginError",
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "Scene",
    "UnknownPluginError",
    "build",
    "bundled_scenarios",
    "find_plugin",
    "json_schema",
    "load_scenario",
    "register_plugin",
    "registered_plugins",
    "scenario_path",
]

del _builtin, _fleet_manager
