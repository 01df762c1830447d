"""`People`: a simulation's pedestrians (`sim.people`), a `fleetsim.people.Crowd` on the site's
floors moved once a step after the robots, among the site's walls and the doors that are not
open, around the robots (discs round their footprints, with their velocities: people see a
robot coming, `SpeedModel.anticipation`), each person on one floor; lidars see them as
upright cylinders (`ray_shapes`), so safety fields stop robots for them. A person
who reaches the end of its route leaves the floor (`left` lists them after the step).

People are arrays only (no PyBullet bodies). Each step the robot-person pairs within the crowd
model's reach are measured: a gap below 0 is a contact, counted once while it lasts (the event
`person_contact` with the person's id, the robot's name and the gap, when it begins; the
collision system's counts have them as "robot-person"), and the closest gap of each step is
kept for the KPIs (`kpis`: people added, walking, arrived, contacts and the steps they lasted,
the closest gap and a histogram of each step's closest gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry.quat import yaw_of
from fleetsim.people import Crowd, Obstacles, SpeedModel, Walls, box_sides
from fleetsim.sensors.shapes import RayShapes, cylinders
from fleetsim.site.graph import NavGraph, RouteError

HEIGHT_M = 1.7  # how tall a person stands, for the lidars
WAIT_SPEED = 0.2  # a person slower than this fraction of its free speed near a robot waits
WAIT_NEAR_M = 1.0  # (near: a gap to a robot below this)


@dataclass(frozen=True)
class YieldRule:
    """How robots without safety fields treat people ahead of them (robots with fields see
    people through their lidars): slow to `slow_factor` of their speed with a person's gap
    ahead below `slow_m`, stop below `stop_m`. Ahead: within `cone_deg` either side of the way
    the robot drives (its heading when it stands)."""

    slow_m: float = 1.5
    stop_m: float = 0.5
    slow_factor: float = 0.3
    cone_deg: float = 60.0

    def __post_init__(self) -> None:
        if not (0 < self.stop_m <= self.slow_m and 0 < self.slow_factor <= 1):
            raise ConfigError("YieldRule: 0 < stop_m <= slow_m and 0 < slow_factor <= 1")
        if not 0 < self.cone_deg <= 180:
            raise ConfigError(f"YieldRule: cone_deg is in (0, 180], got {self.cone_deg!r}")


GAP_BINS = (0.0, 0.25, 0.5, 1.0, 2.0)  # m: the histogram of each step's closest gap


class People:
    """The pedestrians of `sim`, each on one of the site's floors (`levels`; `level`, the
    site's first by default, is where `add` puts them unless told): floors lie side by side
    in the crowd's plane (`offset`), so people meet only their own floor's people, walls and
    robots. `model` the crowd model's parameters; `seed` draws their speeds."""

    def __init__(
        self,
        sim: Any,
        level: str | None = None,
        model: SpeedModel | None = None,
        seed: int | None = None,
        yield_rule: YieldRule | None = YieldRule(),
    ) -> None:
        self.sim, self.yield_rule = sim, yield_rule
        self._yielding = np.empty(0, dtype=np.int64)  # motion handles whose speed we scaled
        self.robot_wait_s = self.robot_slow_s = self.person_wait_s = 0.0
        site = sim.site
        self.level = level or (site.graph.level_names[0] if site is not None else None)
        if site is not None and self.level not in site.graph.level_names:
            raise ConfigError(f"people: no level {self.level!r}; the site's levels are "
                              f"{', '.join(site.graph.level_names)}")  # fmt: skip
        self.levels: list[str | None] = list(site.graph.level_names) if site else [None]
        self._span = self._floor_span()  # (floors side by side in the crowd's plane)
        if seed is None:
            seed = sim.params.seed if sim.params.seed is not None else 0
        self._static = self._site_walls()
        self._doors_shut: tuple[str, ...] = ()
        self.crowd = Crowd(model, self._static, seed)
        self._routes: dict[tuple[str, str], np.ndarray] = {}  # (the site's routes, once each)
        self._walks: tuple[Any, Any] | None = None  # (the site's graph, and it walked both ways)
        self.added = self.arrived = self.contacts = self.contact_steps = 0
        self._touching: set[tuple[int, int]] = set()  # (person id, robot handle) now touching
        self.closest = np.inf
        self.left = np.empty(0, dtype=np.int64)  # who reached the end of its route last step
        self.staying: set[int] = set()  # who stays at its route's end (a behaviour tree's)
        self.gap_counts = np.zeros(len(GAP_BINS), dtype=np.int64)  # (last bin: beyond)

    def _floor_span(self) -> float:
        """How far apart floors sit in the crowd's plane (0 with one floor): wider than the
        site, so that no one's reach crosses from one to the next."""
        site = self.sim.site
        if site is None or len(self.levels) < 2:
            return 0.0
        xs = [site.graph.xy[:, 0]]
        if len(site.obstacles.centres):
            extent = np.abs(site.obstacles.half_extents[:, :2]).max(axis=1)
            xs += [site.obstacles.centres[:, 0] - extent, site.obstacles.centres[:, 0] + extent]
        every = np.concatenate(xs)
        return float(np.ceil(every.max() - every.min() + 50.0))

    def offset(self, level: str | None) -> np.ndarray:
        """(2,) where floor `level` sits in the crowd's plane."""
        return np.array([self.levels.index(level) * self._span, 0.0])

    def _site_walls(self) -> Walls | None:
        site = self.sim.site
        if site is None or not len(site.obstacles.centres):
            return None
        ob = site.obstacles
        floor = ob.centres[:, 2] - ob.half_extents[:, 2]
        sides = []
        for level in self.levels:
            assert level is not None
            here = np.abs(floor - site.elevation(level)) < 1.0
            if here.any():
                box = box_sides(ob.centres[here], ob.half_extents[here], ob.yaws[here])
                sides.append(box + self.offset(level))
        return Walls(np.concatenate(sides)) if sides else None

    # -- people ------------------------------------------------------------------------------

    def add(
        self,
        positions: np.ndarray,
        routes: Sequence[np.ndarray],
        speeds: np.ndarray | None = None,
        radius: float | np.ndarray = 0.2,
        level: str | None = None,
    ) -> np.ndarray:
        """People at `positions` (k, 2) walking `routes` (waypoints (w, 2) each) on floor
        `level` (default `self.level`); their ids."""
        level = level or self.level
        if level not in self.levels:
            raise ConfigError(f"people: no level {level!r}; the site's levels are "
                              f"{', '.join(str(v) for v in self.levels)}")  # fmt: skip
        ids = self.crowd.add(positions, routes, speeds, radius, self.offset(level))
        self.added += len(ids)
        return ids

    def route_between(self, start: str, goal: str) -> np.ndarray:
        """Waypoints (w, 2) from node `start` to node `goal` of the site's graph: the shortest
        way along its lanes, each walked in either direction (people do not keep to one-way
        lanes); a `RouteError` when the nodes are not connected."""
        site = self.sim.site
        if site is None:
            raise ConfigError("people's routes between places need a site")
        known = self._routes.get((start, goal))
        if known is None:
            g = site.graph
            a, b = int(g.level[g.node(start)]), int(g.level[g.node(goal)])
            if a != b:
                raise RouteError(f"{start} is on {g.level_names[a]} and {goal} on "
                                 f"{g.level_names[b]}: people walk one floor (no stairs or "
                                 "lifts for people yet)")  # fmt: skip
            if self._walks is None or self._walks[0] is not g:
                self._walks = (g, _walking(g))
            known = np.asarray(self._walks[1].route(start, goal).positions, dtype=np.float64)
            self._routes[start, goal] = known
        route: np.ndarray = known.copy()
        return route

    def remove(self, ids: np.ndarray) -> None:
        """Take people off the floor."""
        self.crowd.remove(np.asarray(ids))
        self.staying.difference_update(np.asarray(ids).tolist())

    def leave(self, ids: np.ndarray) -> None:
        """People who are done leave the floor (counted in `arrived`)."""
        self.arrived += len(ids)
        self.remove(ids)

    def ray_shapes(self) -> RayShapes | None:
        """The people as lidars see them: upright cylinders `HEIGHT_M` tall on their floor
        (handles below -1, which no body has); None when there is no one."""
        if not len(self.crowd):
            return None
        return cylinders(-2 - self.crowd.ids, self.crowd.x, self.crowd.radius, self.floors(),
                         HEIGHT_M)  # fmt: skip

    def level_rows(self) -> np.ndarray:
        """(people,) each one's floor, an index into `levels`."""
        if not self._span:
            return np.zeros(len(self.crowd), dtype=np.int64)
        rows: np.ndarray = np.rint(self.crowd.offset[:, 0] / self._span).astype(np.int64)
        return rows

    def floors(self) -> np.ndarray:
        """(people,) the height of each one's floor, m."""
        site = self.sim.site
        if site is None:
            return np.zeros(len(self.crowd))
        heights = np.array([site.elevation(str(level)) for level in self.levels])
        floor: np.ndarray = heights[self.level_rows()]
        return floor

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
                if d.level in self.levels and d.mode.value != "open"
            )
        )
        if shut != self._doors_shut:
            self._doors_shut = shut
            segments = np.array([np.asarray(doors.doors[n].ends) + self.offset(doors.doors[n].level)
                                 for n in shut]).reshape(-1, 2, 2)  # fmt: skip
            if self._static is None:
                self.crowd.walls = Walls(segments) if len(segments) else None
            else:
                self.crowd.walls = self._static.with_segments(segments)
        return self.crowd.walls

    def robots(self) -> tuple[Obstacles, np.ndarray]:
        """Every driven robot as a disc (centre, the radius round its footprint, velocity), and
        the robots' body handles, in the same order (arrays: no loop over robots); on a site
        of several floors, each centre in the crowd's plane (its floor's `offset` added)."""
        motion = self.sim.world.motion.agents
        if not len(motion):
            return Obstacles.none(), np.empty(0, dtype=np.int64)
        handles = np.asarray(motion["body"], dtype=np.int64)
        bodies = self.sim.world.bodies
        rows = bodies.rows(handles)
        lo, hi = bodies["aabb_local_min"][rows, :2], bodies["aabb_local_max"][rows, :2]
        radius = np.hypot(*np.maximum(-lo, hi).T)
        centres, velocity = bodies["pos"][rows, :2].copy(), motion["vel"][:, :2].copy()
        if self._span:  # (each on its floor in the crowd's plane: the one nearest its height)
            site = self.sim.site
            heights = np.array([site.elevation(str(level)) for level in self.levels])
            z = bodies["pos"][rows, 2]
            centres[:, 0] += np.abs(z[:, None] - heights[None, :]).argmin(axis=1) * self._span
        return Obstacles(centres, radius, velocity), handles

    def step(self, dt: float) -> None:
        """Move everyone one step (the simulation calls this after the robots moved), then
        let the robots yield to them."""
        if not len(self.crowd):
            self._scale_robots(np.empty(0, dtype=np.int64), np.empty(0), dt)  # (let go)
            return
        self.crowd.walls = self._walls()
        robots, handles = self.robots()
        result = self.crowd.step(dt, robots if len(handles) else None)
        self.left = self.crowd.done.copy()
        person, robot, gap = result.robot_pairs
        if len(gap):
            closest = float(gap.min())
            self.closest = min(self.closest, closest)
            self.gap_counts[np.searchsorted(GAP_BINS, closest, side="right") - 1] += 1
        touching: set[tuple[int, int]] = set()
        for k in np.flatnonzero(gap < 0).tolist():
            pair = (int(self.crowd.ids[person[k]]), int(handles[robot[k]]))
            touching.add(pair)
            self.contact_steps += 1
            if pair in self._touching:
                continue  # (the same contact, going on)
            self.contacts += 1
            self.sim.events.emit("person_contact", self.sim, {
                "person": pair[0], "robot": self.sim.world.objects[pair[1]].name,
                "gap": float(gap[k]),
            })  # fmt: skip
        self._touching = touching
        near_robot = np.zeros(len(self.crowd), dtype=bool)
        near_robot[person[gap < WAIT_NEAR_M]] = True
        v, v0 = self.crowd.v, self.crowd.v0
        waiting = near_robot & (np.einsum("ij,ij->i", v, v) < (WAIT_SPEED * v0) ** 2)
        self.person_wait_s += dt * int(np.count_nonzero(waiting))
        self._yield(robots, handles, person, robot, gap, dt)
        if len(self.staying) and len(self.left):  # (a behaviour tree says when they leave)
            self.left = self.left[~np.isin(self.left, list(self.staying))]
        if len(self.left):  # (at the end of its route a person leaves the floor)
            self.leave(self.left)

    def _yield(
        self,
        robots: Obstacles,
        handles: np.ndarray,
        person: np.ndarray,
        robot: np.ndarray,
        gap: np.ndarray,
        dt: float,
    ) -> None:
        """Each robot's speed factor for the people ahead of it (the yield rule); `handles`
        the robots' bodies, in the motion table's order (`robots()`)."""
        rule = self.yield_rule
        if rule is None or not len(handles):
            self._scale_robots(np.empty(0, dtype=np.int64), np.empty(0), dt)  # (let go)
            return
        nearest = np.full(len(handles), np.inf)
        close = gap < rule.slow_m  # (only people this near count: their robots' ways)
        if close.any():
            person, robot, gap = person[close], robot[close], gap[close]
            involved, at = np.unique(robot, return_inverse=True)
            bodies = self.sim.world.bodies
            heading = yaw_of(bodies["quat"][bodies.rows(handles[involved])])
            way = np.column_stack((np.cos(heading), np.sin(heading)))
            velocity = robots.velocities[involved]
            speed = np.hypot(velocity[:, 0], velocity[:, 1])
            moving = speed > 0.05
            way[moving] = velocity[moving] / speed[moving, None]
            rel = self.crowd.x[person] + self.crowd.offset[person] - robots.centres[robot]
            dist = np.maximum(np.hypot(rel[:, 0], rel[:, 1]), 1e-9)
            ahead = np.einsum("ij,ij->i", rel, way[at]) / dist >= np.cos(
                np.radians(rule.cone_deg))  # fmt: skip
            np.minimum.at(nearest, robot[ahead], gap[ahead])
        scale = np.where(nearest < rule.stop_m, 0.0,
                         np.where(nearest < rule.slow_m, rule.slow_factor, 1.0))  # fmt: skip
        rows = np.arange(len(handles))
        if len(self.sim.safety):  # (robots with safety fields see people through them)
            rows = rows[~np.isin(handles, self.sim.safety.owners())]
        self._scale_robots(rows, scale[rows], dt)

    def _scale_robots(self, rows: np.ndarray, scale: np.ndarray, dt: float) -> None:
        """Motion rows `rows` drive at `scale` of their commanded speed (1: as commanded);
        those scaled before and not now get their commanded speed back."""
        motion = self.sim.world.motion.agents
        slowed = scale < 1.0
        rows, scale = rows[slowed], scale[slowed]
        now = motion.handles[rows].copy()
        if len(self._yielding):  # (let go of those no longer yielding, if still there)
            still = set(now.tolist())
            gone = np.array(
                [h for h in self._yielding.tolist() if h not in still and motion.is_alive(h)],
                dtype=np.int64,
            )
            free = motion.rows(gone)
            motion["safety_scale"][free] = 1.0
            motion["speed_scale"][free] = motion["command_scale"][free]
        motion["safety_scale"][rows] = scale
        motion["speed_scale"][rows] = motion["command_scale"][rows] * scale
        self._yielding = now
        self.robot_wait_s += dt * int(np.count_nonzero(scale == 0.0))
        self.robot_slow_s += dt * int(np.count_nonzero(scale > 0.0))

    def kpis(self) -> dict[str, Any]:
        """People added, on the floor, arrived; robot-person contacts, the closest gap (m),
        and how many steps had their closest gap in each band (m)."""
        edges = [*GAP_BINS, np.inf]
        return {
            "people_added": self.added,
            "people_now": len(self.crowd),
            "people_arrived": self.arrived,
            "person_contacts": self.contacts,
            "person_contact_steps": self.contact_steps,
            "robot_wait_for_people_s": round(self.robot_wait_s, 1),
            "robot_slowed_for_people_s": round(self.robot_slow_s, 1),
            "people_wait_for_robots_s": round(self.person_wait_s, 1),
            "closest_person_gap_m": None if np.isinf(self.closest) else round(self.closest, 3),
            "closest_gap_steps": {
                f"{a:g}-{b:g}": int(c)
                for a, b, c in zip(edges[:-1], edges[1:], self.gap_counts, strict=True)
            },
        }


def _walking(g: NavGraph) -> NavGraph:
    """Graph `g` as people walk it: every lane both ways, none between floors (a lift's)."""
    same = g.level[g.lane_from] == g.level[g.lane_to]
    a, b = g.lane_from[same], g.lane_to[same]
    return NavGraph(g.names, g.xy, np.concatenate((a, b)), np.concatenate((b, a)),
                    level=[g.level_names[k] for k in g.level.tolist()])  # fmt: skip
