"""Collision episodes are counted by what collided: robots, structure, loads, other."""

from __future__ import annotations

from fleetsim import Agent, CollisionMode, MultiRobotSimulationCore, Pose
from fleetsim.collision.kinds import PAIR_KINDS

from ..conftest import make_sim, spawn_box


def test_counts_by_kind_and_carried_loads_are_not_collisions() -> None:
    with make_sim(collision_narrowphase="aabb") as sim:
        robots = [
            Agent.from_urdf("mobile_robot", Pose.from_xyz(x, 0, 0), sim_core=sim)
            for x in (0.0, 0.5)
        ]
        spawn_box(sim, (0.25, 0.1, 0.1), half=0.1, collision_mode=CollisionMode.STATIC)
        load = spawn_box(sim, (5, 0, 0.1), half=0.1, pickable=True)
        spawn_box(sim, (5.15, 0, 0.1), half=0.1, collision_mode=CollisionMode.STATIC)
        spawn_box(sim, (10, 0, 0.1), half=0.1, pickable=False)
        spawn_box(sim, (10.15, 0, 0.1), half=0.1, pickable=False)
        carried = spawn_box(sim, (20, 0, 0.5), half=0.2, pickable=True)
        carrier = Agent.from_urdf("mobile_robot", Pose.from_xyz(20, 0, 0), sim_core=sim)
        carrier.attach_object(carried, Pose.from_xyz(0, 0, 0.2))
        sim.check_collisions()
        assert tuple(sim.collision_counts) == PAIR_KINDS
        assert sim.collision_counts == {
            "robot-robot": 1,
            "robot-structure": 2,
            "robot-load": 0,
            "load-structure": 1,
            "other": 1,
        }
        assert sim.collision_count == 5
        load.set_pose(Pose.from_xyz(0.25, 0.0, 0.3))  # now on both robots, off the rack
        sim.check_collisions()
        assert sim.collision_counts["robot-load"] == 2
        sim.reset()
        assert set(sim.collision_counts.values()) == {0}
        assert len(robots) == 2


def test_collision_counts_start_at_zero(sim: MultiRobotSimulationCore) -> None:
    assert sim.collision_counts == dict.fromkeys(PAIR_KINDS, 0)


def test_a_gripper_on_what_it_picks_is_not_a_collision_but_later_contact_is() -> None:
    from fleetsim import Drop, JointAction, Pick, ShapeParams, SimObject, SimObjectSpawnParams

    with make_sim(timestep=0.01) as sim:
        arm = Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True)
        shape = ShapeParams(half_extents=(0.02, 0.02, 0.02))
        cube = SimObject.from_params(
            SimObjectSpawnParams(visual_shape=shape, initial_pose=Pose.from_xyz(0.55, 0.2, 0.02)),
            sim_core=sim,
        )
        home = [0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8, 0.02, 0.02]
        arm.add_action_sequence(
            [
                Pick(target_object_id=cube.object_id, ee_target_position=(0.55, 0.2, 0.03)),
                Drop(Pose.from_xyz(0.55, -0.2, 0.02), ee_target_position=(0.55, -0.2, 0.03)),
                JointAction(home),
            ]
        )
        touched: list[bool] = []
        for _ in range(3000):
            sim.step_once()
            touched.append(any(cube.object_id in pair for pair in sim.get_active_collision_pairs()))
            if arm.get_current_action() is None:
                break
        assert sim.actions.completed_count == 3
        assert not any(touched) and sim.collision_counts["robot-load"] == 0
        # The gripper is clear of it now: putting the cube in the hand is a collision again.
        cube.set_pose(arm.get_end_effector_pose())
        sim.step_once()
        assert sim.collision_counts["robot-load"] == 1
