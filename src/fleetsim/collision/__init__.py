"""Collision: world AABBs from pose arrays (broadphase and narrow phase to come)."""

from fleetsim.collision.aabb import refresh_moved_aabbs, world_aabbs
from fleetsim.state.bodies import CollisionMode

__all__ = ["CollisionMode", "refresh_moved_aabbs", "world_aabbs"]
