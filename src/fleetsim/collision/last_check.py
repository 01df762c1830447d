"""`LastCheck`: what the previous collision check found and under which settings, so that the
next check of a small scene tests only the bodies whose box changed since (the body table marks
them `unchecked` as their boxes are refreshed) and keeps the confirmed pairs of the others.

A pair of bodies that both kept their pose, box, collision mode and carrier, under the same
settings, has the same answer as last time, as long as the arrays answer it (the "aabb" narrow
phase, or boxes and footprints; a PyBullet query could see joints move inside a box).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.geometry.vectors import all_set
from fleetsim.state import BodyTable, CollisionMode

IntArray = np.ndarray


class LastCheck:
    """The confirmed row pairs of the last check and what they were found under."""

    def __init__(self) -> None:
        self._basis: tuple[Any, ...] | None = None

    def clear(self) -> None:
        self._basis = None

    def remember(
        self, bodies: BodyTable, setup: tuple[Any, ...], mode: np.ndarray, parent: np.ndarray,
        i: IntArray, j: IntArray,
    ) -> None:  # fmt: skip
        """After a check: its pairs (rows, confirmed), the settings, modes and carriers it ran
        under (copies), and the table's rows as they were; every body is checked now."""
        self._basis = (bodies, bodies.layout, len(bodies), setup, mode, parent, i, j)
        bodies["unchecked"][:] = False

    def changed(
        self, bodies: BodyTable, setup: tuple[Any, ...], narrow_phase: str,
        footprints: bool,
    ) -> np.ndarray | None:  # fmt: skip
        """Which rows (bool, N) changed their box since the last check; None when the last
        check is no basis for this one: none yet, rows came, went or moved, other settings,
        modes or carriers, or a pair the narrow phase would ask PyBullet about."""
        basis = self._basis
        if (
            basis is None
            or basis[0] is not bodies
            or basis[1] != bodies.layout
            or basis[2] != len(bodies)
            or basis[3] != setup
        ):
            return None
        mode, parent = bodies["collision_mode"], bodies["parent"]
        if not (_same(basis[4], mode) and _same(basis[5], parent)):
            return None
        if narrow_phase != "aabb":
            if narrow_phase != "closest_points":
                return None
            boxed = bodies["exact_box"] | (mode == int(CollisionMode.NORMAL_2D))
            if footprints:
                boxed |= bodies["footprint"]
            if not (boxed | (mode == int(CollisionMode.DISABLED))).all():
                return None
        changed: np.ndarray = bodies["unchecked"]
        return changed

    def kept(self, changed: np.ndarray) -> tuple[IntArray, IntArray]:
        """The last check's pairs of bodies that both stayed unchanged."""
        assert self._basis is not None
        i, j = self._basis[6], self._basis[7]
        keep = ~(changed[i] | changed[j])
        return i[keep], j[keep]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """`np.array_equal` for two 1-D arrays, without its wrapping (called every step)."""
    return a.shape == b.shape and all_set(a == b)
