"""The phases of one step, as functions over the `World` (see ARCHITECTURE.md, "The step").

1. update: controllers, callbacks, then attached children (pure NumPy/Python; writes buffered);
2. pose flush: moved rows pushed to PyBullet per the pose-sync policy;
3. physics (when on): `stepSimulation`, read back dynamic bodies, carry their children;
4. AABBs of moved rows from the pose arrays (then the spatial grid and collisions, later).
"""

from __future__ import annotations

from fleetsim.collision import refresh_moved_aabbs
from fleetsim.objects import World, attachments


def update_agents(world: World, dt: float) -> None:
    """Move every agent (one vectorised call per controller kind), then wake arrived agents'
    actions, due timers and polling actions."""
    arrived = world.motion.step(dt, world.time)
    if world.actions is not None:
        world.actions.tick(world.time, dt, arrived)


def follow_attachments(world: World) -> None:
    if world.links:
        attachments.follow(world)


def run_callbacks(world: World, sim_time: float, dt: float) -> None:
    world.scheduler.run(sim_time, dt)


def flush_poses(world: World) -> int:
    return world.flush()


def step_physics(world: World) -> None:
    """Advance PyBullet dynamics; PyBullet must hold every kinematic pose first."""
    world.sync()
    world.backend.step_physics()
    if world.read_back_dynamic() and world.links:
        attachments.follow(world)
        world.sync()


def refresh_aabbs(world: World) -> int:
    return refresh_moved_aabbs(world.bodies)
