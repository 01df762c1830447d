"""A body of a given shape, pose and collision mode, for the collision tests."""

from fleetsim import (
    CollisionMode,
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
)


def spawn(
    sim: MultiRobotSimulationCore,
    shape: ShapeParams,
    pose: Pose,
    mode: CollisionMode = CollisionMode.NORMAL_3D,
) -> SimObject:
    return SimObject.from_params(
        SimObjectSpawnParams(visual_shape=shape, initial_pose=pose, collision_mode=mode),
        sim_core=sim,
    )
