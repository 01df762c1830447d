"""`type: fleet_manager`: the reference fleet manager as a world plugin of a scenario.

    plugins:
      - type: fleet_manager
        params:
          assignment: nearest          # greedy, or "module:Class" (an object with assign())
          pick_time: 5                 # seconds at the pick-up and at the drop-off
          drop_time: 5
          tasks:                       # exactly one of:
            list: [{pickup: p1, dropoff: d1, release_time: 0}, ...]
            poisson: {rate_per_hour: 60, pickups: [p1, p2], dropoffs: [d1]}   # or the
                                       # nodes flagged pickup / dropoff when left out
            file: orders.csv           # or .json, relative to the scenario file
          robots: [amr_0, amr_1]       # default: every robot of the scenario

Tasks from a list or a file are checked against the site before the run starts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetsim.errors import ConfigError
from fleetsim.fleet import FleetManager, Task, poisson_tasks, task_list, tasks_from_file
from fleetsim.fleet.tasks import check_tasks
from fleetsim.scenario.plugins import Plugin, import_object, register_plugin
from fleetsim.scenario.schema import NonNegative, Positive


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoissonSpec(_Strict):
    rate_per_hour: Positive
    """Orders per hour at each pick-up station."""
    pickups: list[str] | None = None
    """Pick-up nodes (default: the nodes flagged `pickup`)."""
    dropoffs: list[str] | None = None
    """Drop-off nodes (default: the nodes flagged `dropoff`)."""
    until: Positive | None = None
    """No orders after this simulated time (s)."""


class TasksSpec(_Strict):
    list_: list[dict[str, Any]] | None = Field(None, alias="list")
    poisson: PoissonSpec | None = None
    file: str | None = None

    @model_validator(mode="after")
    def _one(self) -> TasksSpec:
        if sum(x is not None for x in (self.list_, self.poisson, self.file)) != 1:
            raise ValueError("give exactly one of 'list', 'poisson' or 'file'")
        return self


@register_plugin("fleet_manager")
class FleetManagerPlugin(Plugin):
    """Tasks, assignment, traffic control, robot states and KPIs for the scenario's robots."""

    class Params(_Strict):
        tasks: TasksSpec
        assignment: str = "nearest"
        pick_time: NonNegative = 5.0
        drop_time: NonNegative = 5.0
        robots: list[str] | None = None

    manager: FleetManager | None = None

    def initialize(self) -> None:
        if self.robot is not None:
            raise ConfigError("'fleet_manager' is a world plugin: list it under plugins:")
        scene, p = self.scene, self.params
        sim = scene.sim
        if sim.site is None:
            raise ConfigError("the fleet manager needs a site: add a 'site:' section")
        robots = scene.robots if p.robots is None else [scene.robot(n) for n in p.robots]
        assignment: Any = p.assignment
        if ":" in assignment or "." in assignment:
            assignment = import_object(assignment, scene.folder, "assignment policy")()
        self.manager = FleetManager(
            sim, robots, self._tasks(), assignment, p.pick_time, p.drop_time
        ).attach()

    def _tasks(self) -> Iterable[Task]:
        spec, graph = self.params.tasks, self.scene.sim.site.graph
        if spec.poisson is not None:
            pickups = spec.poisson.pickups or graph.nodes_with("pickup")
            dropoffs = spec.poisson.dropoffs or graph.nodes_with("dropoff")
            for key, names in (("pickups", pickups), ("dropoffs", dropoffs)):
                if not names:
                    raise ConfigError(f"tasks.poisson.{key}: none given and no node is flagged")
                for name in names:
                    try:
                        graph.node(name)
                    except ConfigError as exc:
                        raise ConfigError(f"tasks.poisson.{key}: {exc}") from None
            until = spec.poisson.until if spec.poisson.until is not None else float("inf")
            return poisson_tasks(
                spec.poisson.rate_per_hour, pickups, dropoffs, self.scene.rng, until
            )
        if spec.file is not None:
            folder = self.scene.folder
            tasks = tasks_from_file(folder / spec.file if folder else spec.file)
        else:
            tasks = task_list(spec.list_ or [])
        check_tasks(tasks, graph)
        return tasks

    def kpis(self) -> dict[str, Any]:
        return self.manager.kpis() if self.manager is not None else {}
