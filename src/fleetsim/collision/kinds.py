"""What collided with what: each body's role (robot, structure, load, other) and pair kinds.

A robot is an `Agent`; structure is a STATIC body; a load is a pickable object or one attached
to a carrier; anything else is "other". Pair kinds are counted per collision episode, so a run
summary can say "0 robot-robot" at a glance.
"""

from __future__ import annotations

import numpy as np

from fleetsim.state import BodyTable, CollisionMode

ROBOT, STRUCTURE, LOAD, OTHER = 0, 1, 2, 3
PAIR_KINDS = ("robot-robot", "robot-structure", "robot-load", "load-structure", "other")

# Pair kind index by (smaller role, larger role); every other combination is "other".
_KIND_OF = {
    (ROBOT, ROBOT): 0,
    (ROBOT, STRUCTURE): 1,
    (ROBOT, LOAD): 2,
    (STRUCTURE, LOAD): 3,
}
_TABLE = np.full((4, 4), len(PAIR_KINDS) - 1, dtype=np.int64)
for (_a, _b), _k in _KIND_OF.items():
    _TABLE[_a, _b] = _TABLE[_b, _a] = _k


def roles(bodies: BodyTable, rows: np.ndarray) -> np.ndarray:
    """Role of each row (ROBOT, STRUCTURE, LOAD or OTHER), shape like `rows`."""
    robot = bodies["robot"][rows]
    static = bodies["collision_mode"][rows] == int(CollisionMode.STATIC)
    load = bodies["pickable"][rows] | (bodies["parent"][rows] >= 0)
    role = np.full(rows.shape, OTHER, dtype=np.int64)
    role[load] = LOAD
    role[static] = STRUCTURE
    role[robot] = ROBOT
    return role


def pair_kinds(bodies: BodyTable, rows_a: np.ndarray, rows_b: np.ndarray) -> list[str]:
    """The kind (one of `PAIR_KINDS`) of each row pair."""
    kinds = _TABLE[roles(bodies, rows_a), roles(bodies, rows_b)]
    return [PAIR_KINDS[k] for k in kinds.tolist()]


def pair_kind_counts(bodies: BodyTable, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """How many of the row pairs fall in each of `PAIR_KINDS`, shape (len(PAIR_KINDS),)."""
    kinds = _TABLE[roles(bodies, rows_a), roles(bodies, rows_b)]
    counts: np.ndarray = np.bincount(kinds, minlength=len(PAIR_KINDS))
    return counts
