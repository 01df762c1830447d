"""`Site`: where a fleet drives: a navigation graph, and the fixed obstacles (walls, blocked
cells) that become static bodies, from an inline graph, a grid map or an Open-RMF building."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site.graph import NavGraph, Route
from fleetsim.site.movingai import GridMap, load_movingai
from fleetsim.site.rmf_building import Door, Lift, Spawn, load_rmf_building

log = logging.getLogger("fleetsim.site")

WALL_THICKNESS_M = 0.1
BLOCK_HEIGHT_M = 1.0  # blocked grid cells become boxes this tall
LIFT_COST_M = 20.0  # a lift ride costs its height and this much more (doors, the wait)


@dataclass
class Obstacles:
    """Static boxes: centres (K, 3), half extents (K, 3) and yaws (K,), metres and radians."""

    centres: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    half_extents: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    yaws: np.ndarray = field(default_factory=lambda: np.empty(0))

    def __len__(self) -> int:
        return len(self.centres)


@dataclass
class Site:
    """A navigation graph, obstacles, and robots the site file places (Open-RMF spawns)."""

    graph: NavGraph
    obstacles: Obstacles = field(default_factory=Obstacles)
    spawns: list[Spawn] = field(default_factory=list)
    grid: GridMap | None = None
    source: str = "inline"
    level: str | None = None  # the building level it is (Open-RMF's map_name)
    building_name: str | None = None  # an Open-RMF building's name
    doors: list[Door] = field(default_factory=list)  # an Open-RMF building's doors
    unnamed: frozenset[str] = frozenset()  # nodes whose building vertex has no name
    elevations: dict[str, float] = field(default_factory=dict)  # level -> metres (default 0)
    lifts: list[Lift] = field(default_factory=list)  # an Open-RMF building's lifts
    lift_of: dict[str, str] = field(default_factory=dict)  # node -> the lift it is in
    lift_lanes: dict[int, str] = field(default_factory=dict)  # lane -> the lift that rides it

    def elevation(self, level: str) -> float:
        """The height of a level's floor (m; 0 for a level the site gives none)."""
        return float(self.elevations.get(level, 0.0))

    def node_elevation(self, node: int) -> float:
        """The height of the floor a node is on (m)."""
        return self.elevation(self.graph.level_names[int(self.graph.level[node])])

    def level_at(self, z: float) -> str:
        """The level of the graph whose floor is nearest height z (a robot's level)."""
        names = self.graph.level_names
        if len(names) == 1:
            return names[0]
        return min(names, key=lambda name: (abs(self.elevation(name) - z), name))

    def nearest_nodes(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each position (N, 3), the nearest node on its own level (the level whose floor
        is nearest its z) and the distance in the plane (m)."""
        p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
        if len(self.graph.level_names) == 1:
            return self.graph.nearest_nodes(p[:, :2])
        nodes, dist = np.zeros(len(p), dtype=np.int64), np.zeros(len(p))
        levels = np.array([self.level_at(float(z)) for z in p[:, 2]])
        for level in set(levels.tolist()):
            on = levels == level
            nodes[on], dist[on] = self.graph.nearest_nodes(p[on, :2], level)
        return nodes, dist

    def route(self, start: str | int, goal: str | int) -> Route:
        """The shortest route between two nodes along the lanes (see `NavGraph.route`)."""
        return self.graph.route(start, goal)

    @classmethod
    def from_graph(cls, nodes: Any, lanes: Any) -> Site:
        """A site of a navigation graph from node and lane dicts (see `NavGraph.from_lists`), with
        no obstacles."""
        return cls(NavGraph.from_lists(nodes, lanes))

    @classmethod
    def from_grid(cls, path: str | Path, cell_size: float = 1.0, blocked: str = "") -> Site:
        """A site from a MovingAI grid map: the free cells' graph, and the blocked cells merged into
        boxes 1 m tall."""
        grid = load_movingai(path, cell_size, blocked)
        r = grid.rectangles
        centres = np.column_stack(
            ((r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, np.full(len(r), BLOCK_HEIGHT_M / 2))
        )
        halves = np.column_stack(
            ((r[:, 2] - r[:, 0]) / 2, (r[:, 3] - r[:, 1]) / 2, np.full(len(r), BLOCK_HEIGHT_M / 2))
        )
        return cls(
            grid.graph, Obstacles(centres, halves, np.zeros(len(r))), grid=grid, source=str(path)
        )

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        format: str | None = None,
        *,
        level: str | None = None,
        graph: int = 0,
        cell_size: float = 1.0,
        blocked: str = "",
    ) -> Site:
        """A grid map ("movingai", `.map`) or an Open-RMF building ("rmf_building", any other
        name); `format` overrides the guess from the file name."""
        kind = format or ("movingai" if Path(path).suffix == ".map" else "rmf_building")
        if kind == "movingai":
            return cls.from_grid(path, cell_size, blocked)
        if kind == "rmf_building":
            return cls.from_building(path, level, graph)
        raise ConfigError(f"unknown site format {kind!r}: use 'movingai' or 'rmf_building'")

    @classmethod
    def from_building(cls, path: str | Path, level: str | None = None, graph: int = 0) -> Site:
        """A site from an Open-RMF building: its levels' lanes, walls at their elevation, doors and
        lifts (`level` for one level only)."""
        building = load_rmf_building(path, level, graph)
        if building.ignored:  # said once, by name, not dropped silently
            log.warning("%s: not simulated: %s", path, "; ".join(building.ignored))
        w = building.walls
        length = np.hypot(w[:, 2] - w[:, 0], w[:, 3] - w[:, 1])
        keep = length > 1e-6
        w, length, height = w[keep], length[keep], building.wall_heights[keep]
        base = building.wall_bases[keep]
        centres = np.column_stack(
            ((w[:, 0] + w[:, 2]) / 2, (w[:, 1] + w[:, 3]) / 2, base + height / 2)
        )
        halves = np.column_stack((length / 2, np.full(len(w), WALL_THICKNESS_M / 2), height / 2))
        yaws = np.arctan2(w[:, 3] - w[:, 1], w[:, 2] - w[:, 0])
        site = cls(
            building.graph,
            Obstacles(centres, halves, yaws),
            building.spawns,
            source=str(path),
            level=building.level,
            building_name=building.name,
            doors=building.doors,
            unnamed=building.unnamed,
            elevations=building.elevations,
            lifts=building.lifts,
            lift_of=building.lift_of,
        )
        site._join_floors()
        return site

    def _join_floors(self) -> None:
        """Lanes between each two floors a lift serves, from its node on one to its node on
        the other; routing counts the ride (the height, and `LIFT_COST_M` for the doors and
        the wait)."""
        g, start, end, cost, lifts = self.graph, [], [], [], []
        for lift in self.lifts:
            stops: dict[str, int] = {}
            for name in sorted(n for n, owner in self.lift_of.items() if owner == lift.name):
                k = g.node(name)
                stops.setdefault(g.level_names[int(g.level[k])], k)
            for a, b in itertools.combinations(sorted(stops), 2):
                start.append(stops[a])
                end.append(stops[b])
                cost.append(abs(self.elevation(a) - self.elevation(b)) + LIFT_COST_M)
                lifts.append(lift.name)
        if start:
            self.graph = g.with_lanes(start, end, cost)
            self.lift_lanes = {g.lane_count + j: name for j, name in enumerate(lifts)}

    def free_nodes(
        self, count: int, rng: np.random.Generator, flag: str | None = None
    ) -> list[int]:
        """`count` different nodes chosen with `rng` (robots started at random places), only
        among the nodes with `flag` (such as "parking_spot") when given."""
        pool = (
            np.arange(len(self.graph))
            if flag is None
            else np.array([self.graph.node(n) for n in self.graph.nodes_with(flag)], dtype=int)
        )
        if count > len(pool):
            among = f"nodes flagged {flag}" if flag else "nodes"
            raise ConfigError(f"{count} robots do not fit on the site's {len(pool)} {among}")
        return sorted(rng.choice(pool, size=count, replace=False).tolist())
