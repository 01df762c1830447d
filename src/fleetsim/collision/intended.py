"""Contacts that are meant to happen and are not collisions: a gripper closing on the object it
picks, and that object while it is being let go, until the two are apart.

Pairs are (handle, handle) keys as in `CollisionSystem`; a carrier and its attached load are
excluded separately (by the attachment), so a pair only needs to be here before the pick and
just after the drop.
"""

from __future__ import annotations

import numpy as np

from fleetsim.collision.pairs import pair_key
from fleetsim.state import BodyTable


def _key(a: int, b: int) -> int:
    return int(pair_key(np.int64(a), np.int64(b)))


class IntendedContacts:
    """Pairs of bodies whose contact is intended (a carrier and its load, a gripper and what it
    picks); the collision check leaves them out."""

    def __init__(self) -> None:
        self._pairs: dict[int, bool] = {}  # key -> True: forget once the boxes are apart
        self.version = 0

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def allow(self, a: int, b: int) -> None:
        """Contact between bodies `a` and `b` (handles) is intended until `release`d."""
        self._pairs[_key(a, b)] = False
        self.version += 1

    def release(self, a: int, b: int) -> None:
        """Excuse the pair only until their boxes no longer overlap (a load just let go)."""
        self._pairs[_key(a, b)] = True
        self.version += 1

    def forget(self, a: int, b: int) -> None:
        """The contact of a and b is a collision again."""
        if self._pairs.pop(_key(a, b), None) is not None:
            self.version += 1

    def clear(self) -> None:
        """Forget every intended contact."""
        self._pairs.clear()
        self.version += 1

    def filter(self, bodies: BodyTable, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Mask over row pairs (i, j) overlapping now: False for intended contacts. Pairs marked
        `release`d that no longer overlap are forgotten."""
        keys = pair_key(bodies.handles[i], bodies.handles[j])
        known = np.fromiter(self._pairs, dtype=np.int64, count=len(self._pairs))
        intended = np.isin(keys, known)
        overlapping = set(keys[intended].tolist())
        for key, until_apart in list(self._pairs.items()):
            if until_apart and key not in overlapping:
                del self._pairs[key]
                self.version += 1
        keep: np.ndarray = ~intended
        return keep
