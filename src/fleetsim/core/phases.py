"""The phases of one step, as functions over the `World` (see ARCHITECTURE.md, "The step").

1. update: controllers, callbacks, then attached children (pure NumPy/Python; writes buffered);
2. pose flush: moved rows pushed to PyBullet per the pose-sync policy;
3. physics (when on): `stepSimulation`, read back dynamic bodies, carry their children;
4. AABBs of moved rows from the pose arrays (then the spatial grid and collisions, later).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.collision import refresh_moved_aabbs
from fleetsim.control.joints import step_kinematic_joints
from fleetsim.core.profiler import StepProfiler
from fleetsim.objects import World, attachments, joint_sync
from fleetsim.sensors.safety import STATES


def update_agents(world: World, dt: float) -> None:
    """Move every agent (one vectorised call per controller kind) and every kinematic joint,
    then wake the actions of agents that arrived or whose joints arrived, due timers and polling
    actions."""
    arrived = world.motion.step(dt, world.time)
    joints_done = np.empty(0, dtype=np.int64)
    if len(world.joints):
        moving = world.joints["body"][world.joints["moving"] & ~world.joints["physics"]]
        world.arms_moved.update(np.unique(moving).tolist())
        joints_done = step_kinematic_joints(world.joints, dt)
    if world.actions is not None:
        world.actions.tick(world.time, dt, arrived, joints_done)


def follow_attachments(world: World) -> None:
    """Carry attached children to their parents' new poses."""
    if world.links:
        attachments.follow(world)


def run_callbacks(world: World, sim_time: float, dt: float) -> None:
    """Run the callbacks due at `sim_time`."""
    world.scheduler.run(sim_time, dt)


def flush_poses(world: World) -> int:
    """Push moved poses to PyBullet as the pose-sync policy says; how many were pushed."""
    return world.flush()


def step_physics(world: World) -> None:
    """Advance PyBullet dynamics; PyBullet must hold every kinematic pose first."""
    world.sync()
    world.backend.step_physics()
    if len(world.joints):
        world.arms_moved.update(joint_sync.read_physics_joints(world).tolist())
    if world.read_back_dynamic() and world.links:
        attachments.follow(world)
        world.sync()


def refresh_aabbs(world: World) -> int:
    """World boxes of moved bodies from the pose arrays (arms with moving joints: see below)."""
    return refresh_moved_aabbs(world.bodies)


def refresh_arm_boxes(world: World) -> None:
    """Boxes of robots whose joints moved, measured in PyBullet; only needed before a collision
    check, so simulations that do not check never pay for it."""
    if world.arms_moved:
        arms = np.array(sorted(world.arms_moved), dtype=np.int64)
        world.arms_moved.clear()
        joint_sync.refresh_arm_boxes(world, arms)


def sense(
    world: World,
    now: float,
    rng: np.random.Generator,
    profiler: StepProfiler,
    extra: Any = None,
) -> tuple[list[Any], list[tuple[Any, str]]]:
    """The lidars due at `now` scan (`fleetsim.sensors`; `extra`: ray shapes that are not
    bodies, the people), and the safety fields they read are evaluated (timed as
    "safety_fields", within "sensors"): the groups that scanned, and the (object, state) of
    each robot whose field state changed."""
    scanned = world.lidars.sense(world.bodies, now, rng, extra)
    if not scanned or not world.safety:
        return scanned, []
    with profiler.section("safety_fields"):
        changes = world.safety.update(scanned, world.motion.agents, now)
    return scanned, [(world.objects[owner], STATES[state]) for owner, _, state in changes]
