"""The `people:` section at work: a world plugin the builder adds, which puts each group's
people on the floor at the start and as they arrive (seeded by the simulation's seed), each on
a route along the site's graph through its trips, and reports the people's KPIs."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from fleetsim.behavior import Behaviors
from fleetsim.errors import ConfigError
from fleetsim.people import SpeedModel
from fleetsim.scenario.people_places import LATTICE_REACH_M, Placing, lattice, room
from fleetsim.scenario.people_spec import PeopleGroupSpec, PeopleSpec
from fleetsim.scenario.plugins import Plugin

log = logging.getLogger(__name__)


class PeoplePlugin(Plugin):
    """Applies a scenario's `people:` section (`sim.people` moves them): each group comes at
    its `start` (a shift), arrives at its rate until its `stop`."""

    name = "people"

    def __init__(self, spec: PeopleSpec) -> None:
        super().__init__()
        self.spec = spec
        self.next_arrival: list[float] = []
        self.by_group: dict[str, int] = {}
        self._spots: dict[tuple[float, float, float, str | None], np.ndarray] = {}
        self._lattices: dict[tuple[float, float, float, str | None], np.ndarray] = {}
        self.came: list[bool] = []  # each group: whether its start has come
        self.floors: list[str | None] = []  # each group's floor (its places' level)

    def initialize(self) -> None:
        """Check the places, make the simulation's people, put the first ones down."""
        sim = self.scene.sim
        if sim.site is None:
            raise ConfigError("people walk a site's graph: the scenario needs a site")
        graph = sim.site.graph
        for k, group in enumerate(self.spec.groups):
            if not group.to and group.behavior is None:
                raise PeopleError(f"groups[{k}].to", "a group walks to places (to: [...]) or "
                                  "follows a behaviour tree (behavior: file.xml)")  # fmt: skip
            if group.behavior is not None:
                try:
                    Behaviors.of(sim).check(self._tree(group), "person")
                except ConfigError as exc:
                    raise PeopleError(f"groups[{k}].behavior", str(exc)) from None
            floor = None
            for key, names in (("from", group.from_), ("to", group.to)):
                for j, name in enumerate(names):
                    try:
                        here = graph.level_names[int(graph.level[graph.node(name)])]
                    except ConfigError as exc:
                        raise PeopleError(f"groups[{k}].{key}[{j}]", str(exc)) from None
                    wanted = self.spec.level or floor
                    if wanted is not None and here != wanted:
                        raise PeopleError(f"groups[{k}].{key}[{j}]", f"{name} is on {here}, "
                                          f"the group's floor is {wanted}: people walk one "
                                          "floor (no stairs or lifts for people yet)")  # fmt: skip
                    floor = here
            self.floors.append(floor)
        levels = graph.level_names
        if self.spec.level is not None and self.spec.level not in levels:
            raise PeopleError("level", f"the site's levels are {', '.join(levels)}")
        from fleetsim.core.people import People  # (the simulation's; made here with the model)

        sim._people = People(sim, self.spec.level, SpeedModel(time_gap=self.spec.time_gap))
        for k, group in enumerate(self.spec.groups):
            if group.stop is not None and group.stop < group.start:
                raise PeopleError(f"groups[{k}].stop", f"stop {group.stop:g} s is before "
                                  f"start {group.start:g} s")  # fmt: skip
        for k, group in enumerate(self.spec.groups):
            self._check_room(k, group)
        self.rng = np.random.default_rng([sim.params.seed or 0, 4242])
        self.came = [False] * len(self.spec.groups)
        self.next_arrival = [self._draw(g, g.start) for g in self.spec.groups]
        self._arrivals()  # (the groups that come at once)
        sim.on("pre_step", lambda *_: self._arrivals())

    def _draw(self, group: PeopleGroupSpec, after: float) -> float:
        rate = group.rate_per_hour
        return after + float(self.rng.exponential(3600.0 / rate)) if rate > 0 else np.inf

    def _arrivals(self) -> None:
        now = self.scene.sim.sim_time
        for k, group in enumerate(self.spec.groups):
            if not self.came[k] and group.start <= now + 1e-9:
                self.came[k] = True
                self._arrive(group, group.count)
            stop = np.inf if group.stop is None else group.stop
            while self.next_arrival[k] <= min(now, stop):
                self._arrive(group, 1)
                self.next_arrival[k] = self._draw(group, self.next_arrival[k])

    def _arrive(self, group: PeopleGroupSpec, count: int) -> None:
        if count <= 0:
            return
        level = self.floors[self.spec.groups.index(group)]
        people = self.scene.sim.people
        graph = self.scene.sim.site.graph
        starts = np.empty((count, 2))
        floor = people.positions[people.level_rows() == people.levels.index(level)]
        placing = Placing(group.radius, floor, lambda c: self._lattice(c, group.radius, level))
        routes: list[np.ndarray] = []
        places: list[str] = []
        for k in range(count):
            here = group.from_[int(self.rng.integers(len(group.from_)))]
            places.append(here)
            legs = [graph.xy[graph.node(here)][None]]
            for _ in range(group.trips if group.behavior is None else 0):
                there = group.to[int(self.rng.integers(len(group.to)))]
                legs.append(people.route_between(here, there)[1:])
                here = there
            route = np.concatenate(legs)
            starts[k] = placing.place(route[0])
            routes.append(route[1:] if len(route) > 1 else route)
        if placing.crowded:
            log.warning(
                "people: %d of %s found no free place round %s and stand crowded",
                placing.crowded, group.name, ", ".join(sorted(set(places))),
            )  # fmt: skip
        speeds = None if group.speed is None else np.full(count, group.speed)
        ids = people.add(starts, routes, speeds, group.radius, level)
        self.by_group[group.name] = self.by_group.get(group.name, 0) + count
        if group.behavior is not None:  # (each one's tree: it says where they go)
            trees = Behaviors.of(self.scene.sim)
            for person, place in zip(ids.tolist(), places, strict=True):
                trees.add_person(person, self._tree(group), place, group.blackboard)

    def _tree(self, group: PeopleGroupSpec) -> str:
        """The group's tree file, relative to the scenario's folder (or a bundled tree)."""
        assert group.behavior is not None
        from fleetsim.scenario.behavior_setup import tree_path

        return tree_path(self.scene.folder, group.behavior)

    def _check_room(self, k: int, group: PeopleGroupSpec) -> None:
        """Each of a group's places must hold a person, and all of them those who come at
        once."""
        graph, level = self.scene.sim.site.graph, self.floors[k]
        centres = {}
        for j, name in enumerate(group.from_):
            centre = centres[name] = graph.xy[graph.node(name)]
            if not len(self._points(centre, group.radius, level)):
                raise PeopleError(f"groups[{k}].from[{j}]", f"{name}: no room for a person "
                                  f"({group.radius:g} m radius) within {LATTICE_REACH_M:g} m "
                                  "of it, in sight of it and clear of walls: choose a node in "
                                  "the open")  # fmt: skip
        held = room(group.radius, centres.values(), lambda c: self._points(c, group.radius, level))
        if group.count > held:
            raise PeopleError(f"groups[{k}].count", f"{group.count:,} people do not fit round "
                              f"{', '.join(centres)} at once: there is room for {held:,} (a "
                              f"person's width apart, within {LATTICE_REACH_M:g} m of each "
                              "place, clear of walls): use fewer, more places in `from`, or "
                              "let them come at a rate (rate_per_hour)")  # fmt: skip

    def _points(self, centre: np.ndarray, radius: float, level: str | None) -> np.ndarray:
        """`people_places.lattice` round `centre` (kept: a node's places do not change)."""
        key = (round(float(centre[0]), 3), round(float(centre[1]), 3), radius, level)
        points = self._lattices.get(key)
        if points is None:
            people = self.scene.sim.people
            walls, offset = people.crowd.walls, people.offset(level)
            points = self._lattices[key] = lattice(centre, radius, walls, offset)
        return points

    def _lattice(self, centre: np.ndarray, radius: float, level: str | None) -> np.ndarray:
        """The places round `centre`, each a little shaken (seeded, once a node)."""
        key = (round(float(centre[0]), 3), round(float(centre[1]), 3), radius, level)
        spots = self._spots.get(key)
        if spots is None:
            points = self._points(centre, radius, level)
            spots = self._spots[key] = points + self.rng.uniform(-0.01, 0.01, points.shape)
        return spots

    def kpis(self) -> dict[str, Any]:
        """The people's KPIs (`People.kpis`) and how many came, by group."""
        return {**self.scene.sim.people.kpis(), "people_by_group": dict(self.by_group)}


class PeopleError(ConfigError):
    """A `people:` entry the site does not fit: `key` its path in the section."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key, self.message = key, message
