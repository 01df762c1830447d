"""The `people:` section at work: a world plugin the builder adds, which puts each group's
people on the floor at the start and as they arrive (seeded by the simulation's seed), each on
a route along the site's graph through its trips, and reports the people's KPIs."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.behavior import Behaviors
from fleetsim.errors import ConfigError
from fleetsim.people import SpeedModel
from fleetsim.scenario.people_spec import PeopleGroupSpec, PeopleSpec
from fleetsim.scenario.plugins import Plugin

LATTICE_REACH_M = 8.0  # people who appear at a node stand within this of it, nearest first


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
            starts[k] = self._spot(route[0], group.radius, starts[:k], level)
            routes.append(route[1:] if len(route) > 1 else route)
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

    def _spot(self, centre: np.ndarray, radius: float, placed: np.ndarray,
              level: str | None) -> np.ndarray:  # fmt: skip
        """The free place nearest `centre` for a person of `radius` on floor `level`: the first
        point of a lattice round it, nearest first, clear of walls, of the people on that
        floor and of those placed in this call (a little shaken, seeded)."""
        key = (round(float(centre[0]), 3), round(float(centre[1]), 3), radius, level)
        spots = self._spots.get(key)
        if spots is None:
            spots = self._spots[key] = self._lattice(centre, radius, level)
        people = self.scene.sim.people
        here = people.positions[people.level_rows() == people.levels.index(level)]
        near = np.concatenate([
            others[np.abs(others - centre).max(axis=1) <= LATTICE_REACH_M + 1.0]
            for others in (here, placed)
        ])  # fmt: skip
        gap = 2 * radius + 0.02
        if not len(near):
            return np.asarray(spots[0])
        for start in range(0, len(spots), 128):  # (nearest first, a block at a time)
            block = spots[start : start + 128]
            d = block[:, None, :] - near[None, :, :]
            free = np.flatnonzero((d[..., 0] ** 2 + d[..., 1] ** 2 >= gap * gap).all(axis=1))
            if len(free):
                return np.asarray(block[free[0]])
        return np.asarray(spots[-1])  # (every spot taken: the farthest one, crowded)

    def _lattice(self, centre: np.ndarray, radius: float, level: str | None) -> np.ndarray:
        step = 2 * radius + 0.05
        k = np.arange(-int(LATTICE_REACH_M / step), int(LATTICE_REACH_M / step) + 1)
        gx, gy = np.meshgrid(k * step, k * step * np.sqrt(3) / 2)
        gx = gx + (np.arange(len(k))[:, None] % 2) * step / 2
        points = centre + np.column_stack((gx.ravel(), gy.ravel()))
        points = points[np.argsort(np.hypot(*(points - centre).T), kind="stable")]
        walls = self.scene.sim.people.crowd.walls
        if walls is not None:  # (clear of walls, and in sight of the node: not behind a rack)
            off = self.scene.sim.people.offset(level)  # (the floor's, in the crowd's plane)
            who, _, _, dist = walls.near(points + off)
            blocked = np.zeros(len(points), dtype=bool)
            blocked[who[dist < radius + 0.02]] = True
            blocked |= walls.cut_off(centre + off, points + off)
            points = points[~blocked]
        shaken: np.ndarray = points + self.rng.uniform(-0.01, 0.01, points.shape)
        return shaken

    def kpis(self) -> dict[str, Any]:
        """The people's KPIs (`People.kpis`) and how many came, by group."""
        return {**self.scene.sim.people.kpis(), "people_by_group": dict(self.by_group)}


class PeopleError(ConfigError):
    """A `people:` entry the site does not fit: `key` its path in the section."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key, self.message = key, message
