"""`CollisionQueries`: the simulation's collision checks as its users and its step ask for them
(a mixin of `MultiRobotSimulationCore`): whether a check is due, running one, the pairs
touching as PyBullet ids, the episode counts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fleetsim.collision import CheckResult, CollisionSystem
from fleetsim.collision.pairs import key_pairs
from fleetsim.core import phases

if TYPE_CHECKING:
    from fleetsim.backend import Backend
    from fleetsim.core.params import SimulationParams
    from fleetsim.core.profiler import StepProfiler
    from fleetsim.objects import World


class CollisionQueries:
    """Mixin for `MultiRobotSimulationCore`; expects `_world`, `collisions`, `params`,
    `_profiler`, `_backend`, `_next_collision_check` and `sim_time`."""

    _world: World
    collisions: CollisionSystem
    params: SimulationParams
    _profiler: StepProfiler
    _backend: Backend
    _next_collision_check: float

    if TYPE_CHECKING:  # (the simulation's)

        @property
        def sim_time(self) -> float:
            """Simulated seconds."""

    def _collision_check_due(self) -> bool:
        frequency = self.params.collision_check_frequency
        if frequency is None:
            return True
        if frequency == 0 or self.sim_time + 1e-9 < self._next_collision_check:
            return False
        self._next_collision_check = (math.floor(self.sim_time * frequency + 1e-6) + 1) / frequency
        return True

    def _run_collision_check(self) -> CheckResult:
        phases.refresh_arm_boxes(self._world)
        result = self.collisions.check()
        self._profiler.current.update(self.collisions.timings)
        self._world.contacts.publish(result)
        return result

    def check_collisions(self) -> list[tuple[int, int]]:
        """Check now; returns the colliding pairs as sorted (object_id, object_id) tuples.

        Emits `collision_started` / `collision_ended` for pairs that changed since the last check.
        """
        self._backend.ensure_open()
        return self._as_object_ids(key_pairs(self._run_collision_check().keys))

    def get_active_collision_pairs(self) -> list[tuple[int, int]]:
        """The pairs found by the last check, as sorted (object_id, object_id) tuples."""
        return self._as_object_ids(self.collisions.active_pairs)

    @property
    def collision_count(self) -> int:
        """Collision episodes (pairs that started touching) since the start or `reset()`,
        robot-person contacts among them."""
        people = getattr(self, "_people", None)  # (the simulation's, when it has people)
        return int(self.collisions.started_count + (people.contacts if people is not None else 0))

    @property
    def collision_counts(self) -> dict[str, int]:
        """Collision episodes by pair kind since the start or `reset()`: "robot-robot",
        "robot-structure", "robot-load", "load-structure" and "other" (see
        `fleetsim.collision.kinds`), and "robot-person" when there are people (`sim.people`:
        contacts that began). A load riding on its carrier is never a collision."""
        counts = self.collisions.started_by_kind
        people = getattr(self, "_people", None)
        if people is not None:
            counts["robot-person"] = people.contacts
        return counts

    def _as_object_ids(self, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """PyBullet ids of pairs of handles; pairs with a body removed since are left out."""
        bodies = self._world.bodies
        live = [(a, b) for a, b in pairs if bodies.is_alive(a) and bodies.is_alive(b)]
        id_of = self._world.body_id_of  # bodies that waited for one get theirs here
        return sorted(
            (min(ia, ib), max(ia, ib)) for ia, ib in ((id_of(a), id_of(b)) for a, b in live)
        )
