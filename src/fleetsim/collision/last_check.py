"""`LastCheck`: what the previous collision check found and what it read, so the next one can
do less. When nothing it reads changed (the table's version, settings, collision modes,
carriers), the next check gives the same pairs without looking. Otherwise it tests only the
bodies whose box changed since (the body table marks them `unchecked` as their boxes are
refreshed; a large scene does so when few changed) and keeps the confirmed pairs of the others.

A pair of bodies that both kept their pose, box, collision mode and carrier, under the same
settings, has the same answer as last time, as long as the arrays answer it (the "aabb" narrow
phase, or boxes and footprints; a PyBullet query could see joints move inside a box).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.collision.pairs import pairs_of_unchanged
from fleetsim.geometry.vectors import all_set, any_set, same_values
from fleetsim.state import BodyTable, CollisionMode

IntArray = np.ndarray


@dataclass(frozen=True)
class _Basis:
    """What a check ran on and found."""

    bodies: BodyTable
    version: int
    layout: int
    size: int
    setup: tuple[Any, ...]
    modes: np.ndarray  # collision modes (a copy)
    parents: np.ndarray  # carriers (a copy)
    i: IntArray  # confirmed row pairs
    j: IntArray


@dataclass(frozen=True)
class Groups:
    """What the collision modes and carriers say about the rows: the moving ones (neither
    DISABLED nor STATIC), the STATIC ones (none when static collisions are ignored), the
    NORMAL_2D mask, and whether any body is carried."""

    moving: IntArray
    fixed: IntArray
    planar: np.ndarray
    carried: bool

    @staticmethod
    def of(bodies: BodyTable, ignore_static: bool) -> Groups:
        """The groups of `bodies` now."""
        mode = bodies["collision_mode"]
        static = mode == int(CollisionMode.STATIC)
        moving = ((mode != int(CollisionMode.DISABLED)) & ~static).nonzero()[0]
        fixed = static.nonzero()[0] if not ignore_static else moving[:0]
        carried = any_set(bodies["parent"] >= 0)
        return Groups(moving, fixed, mode == int(CollisionMode.NORMAL_2D), carried)


class LastCheck:
    """The confirmed row pairs of the last check and what they were found under."""

    def __init__(self) -> None:
        self._basis: _Basis | None = None
        self._groups: Groups | None = None  # of the modes and carriers the basis holds

    def clear(self) -> None:
        """Forget the last check (the next one starts afresh)."""
        self._basis = self._groups = None

    def remember(
        self,
        bodies: BodyTable,
        setup: tuple[Any, ...],
        i: IntArray,
        j: IntArray,
        same: bool = False,
    ) -> None:
        """After a check: its pairs (rows, confirmed), the settings it ran under, and the
        table as it was (version, rows, modes, carriers); every body is checked now. `same`:
        `same_setup` said so as this check began (the modes and carriers are the last
        basis's, still: a check writes neither)."""
        if same and self._basis is not None:
            modes, parents = self._basis.modes, self._basis.parents
        else:
            modes, parents = bodies["collision_mode"].copy(), bodies["parent"].copy()
        self._basis = _Basis(
            bodies, bodies.version, bodies.layout, len(bodies), setup, modes, parents, i, j
        )
        bodies["unchecked"][:] = False

    def groups(self, bodies: BodyTable, ignore_static: bool, same: bool) -> Groups:
        """`Groups.of(bodies, ignore_static)`, worked out again only when `same_setup` did
        not hold as this check began (`same` False): else the modes, carriers and settings
        are those the last groups were worked out from (a check writes none of them)."""
        if not same or self._groups is None:
            self._groups = Groups.of(bodies, ignore_static)
        return self._groups

    def same_setup(self, bodies: BodyTable, setup: tuple[Any, ...]) -> bool:
        """The same table, rows, settings, collision modes and carriers as the last check."""
        basis = self._basis
        return (
            basis is not None
            and basis.bodies is bodies
            and basis.layout == bodies.layout
            and basis.size == len(bodies)
            and basis.setup == setup
            and same_values(basis.modes, bodies["collision_mode"])
            and same_values(basis.parents, bodies["parent"])
        )

    def unchanged(self, bodies: BodyTable) -> bool:
        """With `same_setup`: nothing moved or was refreshed since (the same table version)."""
        assert self._basis is not None
        return self._basis.version == bodies.version

    def changed(self, bodies: BodyTable, narrow_phase: str, footprints: bool) -> np.ndarray | None:
        """With `same_setup`: which rows (bool, N) changed their box since the last check; None
        when a pair may need PyBullet's narrow phase (which could see joints move in a box)."""
        if narrow_phase != "aabb":
            if narrow_phase != "closest_points":
                return None
            mode = bodies["collision_mode"]
            boxed = bodies["exact_box"] | (mode == int(CollisionMode.NORMAL_2D))
            if footprints:
                boxed |= bodies["footprint"]
            if not all_set(boxed | (mode == int(CollisionMode.DISABLED))):
                return None
        changed: np.ndarray = bodies["unchecked"]
        return changed

    def kept(self, changed: np.ndarray) -> tuple[IntArray, IntArray]:
        """The last check's pairs of bodies that both stayed unchanged."""
        assert self._basis is not None
        return pairs_of_unchanged(self._basis.i, self._basis.j, changed)
