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
          robots: [amr_0, amr_1]       # default: every robot of the scenario without a tree
          battery: {initial: 1.0, low: 0.2, resume: 0.9}   # off unless given; robots charge
                                       # at nodes flagged charger (see BatteryParams)
          max_active: 60               # robots on tasks at once (default: one per five
                                       # nodes that are not parking spots)
          dispatch_per_s: 4            # robots sent out a second at most (default: 0.5% of
                                       # max_active, at least 2; none while congested)
          near_miss_gap: 0.2           # metres: closer is a near miss
          stall_after_s: 120           # a robot whose task has not advanced this long stalls

Tasks from a list or a file are checked against the site before the run starts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetsim.errors import ConfigError, closest
from fleetsim.fleet import (
    BatteryParams,
    FleetManager,
    Task,
    poisson_tasks,
    task_list,
    tasks_from_file,
)
from fleetsim.fleet.tasks import check_tasks
from fleetsim.scenario.plugins import Plugin, import_object, register_plugin
from fleetsim.scenario.spec_base import NonNegative, Positive


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoissonSpec(_Strict):
    """Tasks arriving as a Poisson process: rate, kinds and places, seeded."""

    rate_per_hour: Positive
    """Orders per hour at each pick-up station."""
    pickups: list[str] | None = None
    """Pick-up nodes (default: the nodes flagged `pickup`)."""
    dropoffs: list[str] | None = None
    """Drop-off nodes (default: the nodes flagged `dropoff`)."""
    until: Positive | None = None
    """No orders after this simulated time (s)."""


class BatterySpec(_Strict):
    """Batteries (off unless given): fractions of a full charge; see `BatteryParams`."""

    initial: float = Field(1.0, ge=0, le=1)
    drain_per_m: NonNegative = 0.00015
    drain_per_s: NonNegative = 0.00003
    drain_idle_per_s: NonNegative = 0.00001
    charge_per_s: Positive = 0.0004
    low: float = Field(0.2, ge=0, le=1)
    resume: float = Field(0.9, ge=0, le=1)


class TasksSpec(_Strict):
    """Where the fleet manager's tasks come from: a list, a file, or a Poisson stream."""

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
        """The `fleet_manager` plugin's parameters: tasks, assignment, times, batteries, parking,
        limits."""

        tasks: TasksSpec
        assignment: str = "nearest"
        pick_time: NonNegative = 5.0
        drop_time: NonNegative = 5.0
        robots: list[str] | None = None
        battery: BatterySpec | None = None
        max_active: int | None = Field(None, ge=1)  # robots on tasks at once (default: by site)
        # robots sent out a second at most (default: by site)
        dispatch_per_s: float | None = Field(None, gt=0)
        near_miss_gap: NonNegative = 0.2
        stall_after_s: float = Field(120.0, gt=0)  # a task not advancing this long: a stall

    manager: FleetManager | None = None
    _starts: list[int]
    _reach: np.ndarray | None = None

    def initialize(self) -> None:
        """Make the fleet manager over the scenario's robots and attach it to the simulation."""
        if self.robot is not None:
            raise ConfigError("'fleet_manager' is a world plugin: list it under plugins:")
        scene, p = self.scene, self.params
        sim = scene.sim
        if sim.site is None:
            raise ConfigError("the fleet manager needs a site: add a 'site:' section")
        names = [r.name for r in scene.robots]
        unknown = [n for n in (p.robots or []) if n not in names]
        if unknown:
            guess = closest(unknown[0], names)
            hint = f"did you mean '{guess}'?" if guess else f"robots: {', '.join(names[:8])}"
            raise ConfigError(
                f"params.robots: no robot named '{unknown[0]}' in the scenario: {hint}"
            )
        robots = ([r for r in scene.robots if not r.user_data.get("behavior")]  # (a tree's own)
                  if p.robots is None else [scene.robot(n) for n in p.robots])  # fmt: skip
        here = np.array([r.get_pose().position for r in robots]).reshape(-1, 3)
        self._starts = sim.site.nearest_nodes(here)[0].tolist()
        assignment: Any = p.assignment
        if ":" in assignment or "." in assignment:
            assignment = import_object(assignment, scene.folder, "assignment policy")()
        battery = BatteryParams(**p.battery.model_dump()) if p.battery is not None else None
        self.manager = FleetManager(
            sim,
            robots,
            self._tasks(),
            assignment,
            p.pick_time,
            p.drop_time,
            battery=battery,
            near_miss_gap=p.near_miss_gap,
            max_active=p.max_active,
            stall_after_s=p.stall_after_s,
            dispatch_per_s=p.dispatch_per_s,
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
                self._check_reached(f"tasks.poisson.{key}", names)
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
        for k, task in enumerate(tasks):
            self._check_reached(f"{task.source or f'tasks[{k}]'} ({task.id})", task.places)
        return tasks

    def _check_reached(self, where: str, places: Iterable[str | int]) -> None:
        """Every place must be on a route from some robot's start, else the run would only
        fail its tasks: say which now."""
        graph = self.scene.sim.site.graph
        if self._reach is None:
            self._reach = graph.reachable(self._starts)
        for place in places:
            if not self._reach[graph.node(place)]:
                raise ConfigError(
                    f"{where}: '{graph.names[graph.node(place)]}' cannot be reached from any "
                    "robot's start (check the lanes and their directions)"
                )

    def kpis(self) -> dict[str, Any]:
        """The fleet manager's KPIs."""
        return self.manager.kpis() if self.manager is not None else {}

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """The fleet manager's tables."""
        return self.manager.tables() if self.manager is not None else {}
