"""`People`: a simulation's pedestrians (`sim.people`), a `fleetsim.people.Crowd` on the site's
floor moved once a step after the robots, among the site's walls and the doors that are not
open, around the robots (discs round their footprints, moving at their velocities). A person
who reaches the end of its route leaves the floor (`left` lists them after the step).

People are arrays only (no PyBullet bodies). Each step the robot-person pairs closer than
`near_m` are measured: a gap below 0 is a contact (the event `person_contact` with the person's
id, the robot's name and the gap), and the closest gap of each step is kept for the KPIs
(`kpis`: people added, walking, arrived, contacts, the closest gap and a histogram of each
step's closest gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.people import Crowd, Obstacles, SpeedModel, Walls, box_sides
from fleetsim.site.graph import RouteError

NEAR_M = 2.0  # robot-person gaps measured within this
GAP_BINS = (0.0, 0.25, 0.5, 1.0, 2.0)  # m: the histogram of each step's closest gap


class People:
    """The pedestrians of `sim` on floor `level` (default: the site's first, or the whole
    plane without a site). `model` the crowd model's parameters; `seed` draws their speeds."""

    def __init__(
        self,
        sim: Any,
        level: str | None = None,
        model: SpeedModel | None = None,
        seed: int | None = None,
    ) -> None:
        self.sim = sim
        site = sim.site
        self.level = level or (site.graph.level_names[0] if site is not None else None)
        if seed is None:
            seed = sim.params.seed if sim.params.seed is not None else 0
        self._static = self._site_walls()
        self._doors_shut: tuple[str, ...] = ()
        self.crowd = Crowd(model, self._static, seed)
        self.added = self.arrived = self.contacts = 0
        self.closest = np.inf
        self.left = np.empty(0, dtype=np.int64)  # who reached the end of its route last step
        self.gap_counts = np.zeros(len(GAP_BINS), dtype=np.int64)  # (last bin: beyond)

    def _site_walls(self) -> Walls | None:
        site = self.sim.site
        if site is None or not len(site.obstacles.centres):
            return None
        ob = site.obstacles
        floor = ob.centres[:, 2] - ob.half_extents[:, 2]
        here = np.abs(floor - site.elevation(self.level)) < 1.0
        if not here.any():
            return None
        return Walls(box_sides(ob.centres[here], ob.half_extents[here], ob.yaws[here]))

    # -- people ------------------------------------------------------------------------------

    def add(
        self,
        positions: np.ndarray,
        routes: Sequence[np.ndarray],
        speeds: np.ndarray | None = None,
        radius: float | np.ndarray = 0.2,
    ) -> np.ndarray:
        """People at `positions` (k, 2) walking `routes` (waypoints (w, 2) each); their ids."""
        ids = self.crowd.add(positions, routes, speeds, radius)
        self.added += len(ids)
        return ids

    def route_between(self, start: str, goal: str) -> np.ndarray:
        """Waypoints (w, 2) from node `start` to node `goal` of the site's graph, along its
        lanes in either direction (people do not keep to one-way lanes)."""
        site = self.sim.site
        if site is None:
            raise ConfigError("people's routes between places need a site")
        try:
            return np.asarray(site.route(start, goal).positions, dtype=np.float64)
        except RouteError:
            return np.asarray(site.route(goal, start).positions, dtype=np.float64)[::-1]

    def remove(self, ids: np.ndarray) -> None:
        """Take people off the floor."""
        self.crowd.remove(np.asarray(ids))

    @property
    def positions(self) -> np.ndarray:
        """(people, 2) where everyone is, m."""
        return self.crowd.x

    # -- a step ------------------------------------------------------------------------------

    def _walls(self) -> Walls | None:
        doors = self.sim.doors
        if doors is None:
            return self._static
        shut = tuple(
            sorted(
                name
                for name, d in doors.doors.items()
                if d.level == self.level and d.mode.value != "open"
            )
        )
        if shut != self._doors_shut:
            self._doors_shut = shut
            segments = np.array([doors.doors[n].ends for n in shut]).reshape(-1, 2, 2)
            if self._static is None:
                self.crowd.walls = Walls(segments) if len(segments) else None
            else:
                self.crowd.walls = self._static.with_segments(segments)
        return self.crowd.walls

    def robots(self) -> tuple[Obstacles, np.ndarray]:
        """Every driven robot as a disc (centre, the radius round its footprint, velocity), and
        the robots' body handles, in the same order (arrays: no loop over robots)."""
        motion = self.sim.world.motion.agents
        if not len(motion):
            return Obstacles.none(), np.empty(0, dtype=np.int64)
        handles = np.asarray(motion["body"], dtype=np.int64)
        bodies = self.sim.world.bodies
        rows = bodies.rows(handles)
        lo, hi = bodies["aabb_local_min"][rows, :2], bodies["aabb_local_max"][rows, :2]
        radius = np.hypot(*np.maximum(-lo, hi).T)
        centres, velocity = bodies["pos"][rows, :2].copy(), motion["vel"][:, :2].copy()
        return Obstacles(centres, radius, velocity), handles

    def step(self, dt: float) -> None:
        """Move everyone one step (the simulation calls this after the robots moved)."""
        if not len(self.crowd):
            return
        self.crowd.walls = self._walls()
        robots, handles = self.robots()
        result = self.crowd.step(dt, robots if len(handles) else None)
        self.arrived += len(self.crowd.done)
        self.left = self.crowd.done.copy()
        person, robot, gap = result.robot_pairs
        if len(gap):
            closest = float(gap.min())
            self.closest = min(self.closest, closest)
            self.gap_counts[np.searchsorted(GAP_BINS, closest, side="right") - 1] += 1
            for k in np.flatnonzero(gap < 0).tolist():
                self.contacts += 1
                self.sim.events.emit("person_contact", self.sim, {
                    "person": int(self.crowd.ids[person[k]]),
                    "robot": self.sim.world.objects[int(handles[robot[k]])].name,
                    "gap": float(gap[k]),
                })  # fmt: skip
        if len(self.left):  # (at the end of its route a person leaves the floor)
            self.crowd.remove(self.left)

    def kpis(self) -> dict[str, Any]:
        """People added, on the floor, arrived; robot-person contacts, the closest gap (m),
        and how many steps had their closest gap in each band (m)."""
        edges = [*GAP_BINS, np.inf]
        return {
            "people_added": self.added,
            "people_now": len(self.crowd),
            "people_arrived": self.arrived,
            "person_contacts": self.contacts,
            "closest_person_gap_m": None if np.isinf(self.closest) else round(self.closest, 3),
            "closest_gap_steps": {
                f"{a:g}-{b:g}": int(c)
                for a, b, c in zip(edges, edges[1:], self.gap_counts, strict=False)
            },
        }
