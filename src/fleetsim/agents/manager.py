"""`SimObjectManager` and `AgentManager`: spawn and steer groups of objects and agents."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from fleetsim.agents.agent import Agent
from fleetsim.agents.grid import GridSpawnParams
from fleetsim.errors import ConfigError, ObjectRemovedError
from fleetsim.geometry import Pose, quat
from fleetsim.memory import check_fits
from fleetsim.objects import SimObject
from fleetsim.objects.sim_object import world_of
from fleetsim.objects.world import HasWorld

ObjT = TypeVar("ObjT", bound=SimObject)
Params = Any  # SimObjectSpawnParams for SimObject, AgentSpawnParams for Agent


class SimObjectManager(Generic[ObjT]):
    """Spawns objects of `object_class` (SimObject by default) and keeps them in `objects`.

    Every spawning call is all-or-nothing: if one object fails, those it created are removed.
    """

    def __init__(self, sim_core: HasWorld, object_class: type[ObjT] = SimObject) -> None:  # type: ignore[assignment]
        self.sim_core = sim_core
        self._world = world_of(sim_core)
        self.object_class = object_class
        self.objects: list[ObjT] = []

    # -- spawning -----------------------------------------------------------------------------

    def spawn_objects_batch(self, params_list: Sequence[Params]) -> list[ObjT]:
        """One object per params, each at its own `initial_pose`."""
        created: list[ObjT] = []
        try:
            with self._world.backend.undrawn():  # bulk spawning is much faster undrawn
                for params in params_list:
                    created.append(self.object_class.from_params(params, sim_core=self.sim_core))
        except BaseException:
            for obj in created:
                obj.remove()
            raise
        self.objects.extend(created)
        return created

    def spawn_objects_grid(
        self, num_objects: int, grid_params: GridSpawnParams, spawn_params: Params
    ) -> list[ObjT]:
        """`num_objects` copies of `spawn_params` on a grid."""
        _check_count(num_objects, "the number of objects")
        positions, orientation = _grid(num_objects, grid_params)
        return self._spawn_copies(spawn_params, positions, orientation)

    def spawn_grid_mixed(
        self,
        num_objects: int,
        grid_params: GridSpawnParams,
        spawn_params_list: Sequence[Params | tuple[Params, float]],
    ) -> list[ObjT]:
        """A grid whose cells draw params at random (weights optional), seeded by `sim.rng`."""
        poses = self._grid_poses(num_objects, grid_params)
        choices, weights = _weighted(spawn_params_list)
        rng = getattr(self.sim_core, "rng", None) or np.random.default_rng()
        picks = rng.choice(len(choices), size=num_objects, p=weights)
        return self.spawn_objects_batch(
            [_at(choices[k], p) for k, p in zip(picks, poses, strict=True)]
        )

    def spawn_grid_counts(
        self, grid_params: GridSpawnParams, spawn_params_count_list: Sequence[tuple[Params, int]]
    ) -> list[ObjT]:
        """Exactly `count` of each params, in order, on one grid."""
        for _, count in spawn_params_count_list:
            _check_count(count, "spawn counts")
        total = sum(count for _, count in spawn_params_count_list)
        positions, orientation = _grid(total, grid_params)
        created: list[ObjT] = []
        try:
            start = 0
            for params, count in spawn_params_count_list:
                created += self._spawn_copies(params, positions[start : start + count], orientation)
                start += count
        except BaseException:
            self.objects = self.objects[: len(self.objects) - len(created)]
            for obj in reversed(created):
                obj.remove()
            raise
        return created

    def _spawn_copies(
        self, params: Params, positions: np.ndarray, orientation: np.ndarray
    ) -> list[ObjT]:
        """Copies of `params` at `positions` at once (`from_params_at`), all or nothing."""
        with self._world.backend.undrawn():  # bulk spawning is much faster undrawn
            created = self.object_class.from_params_at(
                params, positions, orientation, sim_core=self.sim_core
            )
        self.objects.extend(created)
        return created

    def _grid_poses(self, count: int, grid: GridSpawnParams) -> list[Pose]:
        _check_count(count, "the number of objects")
        positions, orientation = _grid(count, grid)
        return [Pose(p, orientation) for p in positions]

    def __len__(self) -> int:
        return len(self.objects)

    def __getitem__(self, index: int) -> ObjT:
        return self.objects[index]


class AgentManager(SimObjectManager[Agent]):
    """Spawns agents (`object_class=Agent`) and steers them by index."""

    def __init__(self, sim_core: HasWorld, object_class: type[Agent] = Agent) -> None:
        super().__init__(sim_core, object_class)
        self._driver_cache: tuple[tuple[int, int], list[Agent], np.ndarray] | None = None

    @property
    def agents(self) -> list[Agent]:
        """The agents this manager spawned (and that are not removed)."""
        return self.objects

    spawn_agents_grid = SimObjectManager.spawn_objects_grid
    spawn_agents_grid_mixed = SimObjectManager.spawn_grid_mixed
    spawn_agent_grid_counts = SimObjectManager.spawn_grid_counts

    def set_goal_pose(self, agent_index: int, goal: Pose) -> None:
        """Send agent number `agent_index` (in spawn order) to `goal`."""
        self.objects[agent_index].set_goal(goal)

    def get_moving_count(self) -> int:
        """How many of this manager's agents are driving (one array operation)."""
        handles = np.array([a.motion_handle for a in self.objects if a.drives], dtype=np.int64)
        return self._world.motion.moving_count(handles) if handles.size else 0

    def get_arrived(self) -> list[Agent]:
        """This manager's agents that have reached their goal (or path end), in spawn order:
        one array operation for the whole fleet, where `is_goal_reached()` a robot at a time
        would take milliseconds a step at tens of thousands. An agent removed since is left
        out."""
        drivers, handles = self._drivers()
        try:
            reached = self._world.motion.arrived(handles)
        except ObjectRemovedError:  # some were removed: look again at those still there
            self._driver_cache = None
            drivers, handles = self._drivers(alive_only=True)
            reached = self._world.motion.arrived(handles)
        return [drivers[i] for i in np.flatnonzero(reached).tolist()]

    def _drivers(self, alive_only: bool = False) -> tuple[list[Agent], np.ndarray]:
        """The agents that drive and their motion handles, kept while the list is the same one
        of the same length (spawning adds to it)."""
        key = (id(self.objects), len(self.objects))
        cache = self._driver_cache
        if cache is None or cache[0] != key:
            live = [a for a in self.objects if not (alive_only and a.is_removed)]
            drivers = [a for a in live if a.drives]
            handles = np.array([a.motion_handle for a in drivers], dtype=np.int64)
            cache = self._driver_cache = (key, drivers, handles)
        return cache[1], cache[2]

    def register_callback(
        self, callback: Callable[[AgentManager, float], Any], frequency: float | None = None
    ) -> int:
        """Call `callback(manager, dt)` every step or at `frequency` Hz (goal logic, dispatch)."""
        return self._world.scheduler.add(callback, self, frequency)


def _grid(count: int, grid: GridSpawnParams) -> tuple[np.ndarray, np.ndarray]:
    """Positions (count, 3) on the grid and the one orientation (4,) they share."""
    if not isinstance(grid, GridSpawnParams):
        raise ConfigError(f"grid_params must be GridSpawnParams, got {type(grid).__name__}")
    return grid.positions(count), np.asarray(quat.from_yaw(grid.yaw), dtype=np.float64)


def _at(params: Params, pose: Pose) -> Params:
    return dataclasses.replace(params, initial_pose=pose)


def _weighted(items: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    if not items:
        raise ConfigError("spawn_grid_mixed needs at least one spawn params")
    pairs = [item if isinstance(item, tuple) else (item, 1.0) for item in items]
    weights = np.array([float(w) for _, w in pairs])
    if np.any(weights < 0) or weights.sum() <= 0:
        raise ConfigError("spawn weights must be >= 0 and not all zero")
    return [p for p, _ in pairs], weights / weights.sum()


def _check_count(count: object, what: str) -> None:
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
        raise ConfigError(f"{what} must be whole numbers >= 0, got {count!r}")
    check_fits(int(count), "bodies")  # before any array of them is made
