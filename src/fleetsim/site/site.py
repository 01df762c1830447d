"""`Site`: where a fleet drives: a navigation graph, and the fixed obstacles (walls, blocked
cells) that become static bodies, from an inline graph, a grid map or an Open-RMF building."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site.graph import NavGraph, Route
from fleetsim.site.movingai import GridMap, load_movingai
from fleetsim.site.rmf_building import Door, Spawn, load_rmf_building

WALL_THICKNESS_M = 0.1
BLOCK_HEIGHT_M = 1.0  # blocked grid cells become boxes this tall


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

    def route(self, start: str | int, goal: str | int) -> Route:
        """The shortest route between two nodes along the lanes (see `NavGraph.route`)."""
        return self.graph.route(start, goal)

    @classmethod
    def from_graph(cls, nodes: Any, lanes: Any) -> Site:
        return cls(NavGraph.from_lists(nodes, lanes))

    @classmethod
    def from_grid(cls, path: str | Path, cell_size: float = 1.0, blocked: str = "") -> Site:
        grid = load_movingai(path, cell_size, blocked)
        r = grid.rectangles
        centres = np.column_stack(
            ((r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, np.full(len(r), BLOCK_HEIGHT_M / 2))
        )
        halves = np.column_stack(
            ((r[:, 2] - r[:, 0]) / 2, (r[:, 3] - r[:, 1]) / 2, np.full(len(r), BLOCK_HEIGHT_M / 2))
        )
        return cls(grid.graph, Obstacles(centres, halves, np.zeros(len(r))), grid=grid,
                   source=str(path))  # fmt: skip

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
        building = load_rmf_building(path, level, graph)
        w = building.walls
        length = np.hypot(w[:, 2] - w[:, 0], w[:, 3] - w[:, 1])
        keep = length > 1e-6
        w, length, height = w[keep], length[keep], building.wall_heights[keep]
        centres = np.column_stack(((w[:, 0] + w[:, 2]) / 2, (w[:, 1] + w[:, 3]) / 2, height / 2))
        halves = np.column_stack((length / 2, np.full(len(w), WALL_THICKNESS_M / 2), height / 2))
        yaws = np.arctan2(w[:, 3] - w[:, 1], w[:, 2] - w[:, 0])
        return cls(building.graph, Obstacles(centres, halves, yaws), building.spawns,
                   source=str(path), level=building.level, building_name=building.name,
                   doors=building.doors, unnamed=building.unnamed)  # fmt: skip

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
