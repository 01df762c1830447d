"""Collision: world AABBs from pose arrays, a vectorised spatial-hash broadphase, narrow phases."""

from fleetsim.collision.aabb import refresh_moved_aabbs, world_aabbs
from fleetsim.collision.broadphase import candidate_pairs, suggested_cell_size
from fleetsim.collision.system import NARROW_PHASES, CellSizePolicy, CheckResult, CollisionSystem
from fleetsim.state.bodies import CollisionMode

__all__ = [
    "NARROW_PHASES",
    "CellSizePolicy",
    "CheckResult",
    "CollisionMode",
    "CollisionSystem",
    "candidate_pairs",
    "refresh_moved_aabbs",
    "suggested_cell_size",
    "world_aabbs",
]
