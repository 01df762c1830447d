"""The crowd workload: N bundled `mobile_robot`s in one aisle, driving through each other.

The robots start in four lanes of a 4 m wide aisle, 1.2 m apart, and drive (0.1 s step) to
random points of the aisle, so that many touch at once; `block()` steps and then sends every
robot that arrived to a new goal. The goals come from a seeded generator, so simulations of
the same crowd with different settings see the same goals. Used by `fleetsim bench` (the
default settings) and `benchmarks/crowd.py` (settings side by side).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams

TIMESTEP = 0.1
LANES = 4
SPACING = 1.2


class Crowd:
    """The crowd workload: `mobile_robot`s in one aisle driving to random points through each other,
    a collision check every step."""

    def __init__(self, n: int, seed: int = 1, **settings: Any) -> None:
        params = SimulationParams(timestep=TIMESTEP, target_rtf=0, seed=seed, **settings)
        self.sim = MultiRobotSimulationCore(params)
        self.robots = [
            Agent.from_urdf(
                "mobile_robot",
                Pose.from_xyz(SPACING * (k // LANES), 0.5 + k % LANES, 0.0),
                sim_core=self.sim,
            )
            for k in range(n)
        ]
        self.length = SPACING * max(1, -(-n // LANES))
        self.rng = np.random.default_rng(seed)
        self.send(self.robots)

    def send(self, robots: list[Agent]) -> None:
        """A new random goal in the aisle for each of `robots`."""
        for robot in robots:
            x, y = self.rng.uniform(0, self.length), self.rng.uniform(0.3, 3.7)
            robot.set_goal(Pose.from_xyz(x, y, 0.0))

    def block(self, steps: int) -> list[float]:
        """Step `steps` times; the wall seconds of each step. Arrived robots get new goals."""
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            self.sim.step_once()
            times.append(time.perf_counter() - t)
        self.send([r for r in self.robots if r.is_goal_reached()])
        return times

    def touching(self) -> set[tuple[str, str]]:
        """The pairs touching at the last check, by robot name: comparable between crowds (a
        robot's PyBullet id depends on when it got its body) and made without giving any
        robot a PyBullet body."""
        objects = self.sim.world.objects
        return {
            (min(na, nb), max(na, nb))
            for na, nb in (
                (objects[a].name, objects[b].name) for a, b in self.sim.collisions.active_pairs
            )
        }
