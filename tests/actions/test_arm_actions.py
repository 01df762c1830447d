"""JointAction, PoseAction and arm pick-and-place on real robots."""

import numpy as np
import pytest

from fleetsim import (
    ActionStatus,
    Agent,
    Drop,
    JointAction,
    MultiRobotSimulationCore,
    Pick,
    Pose,
    PoseAction,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
)

from ..conftest import make_sim


def panda(sim: MultiRobotSimulationCore) -> Agent:
    return Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True)


def cube(sim: MultiRobotSimulationCore, xyz: tuple[float, float, float]) -> SimObject:
    params = SimObjectSpawnParams(
        visual_shape=ShapeParams(half_extents=(0.02, 0.02, 0.02)),
        initial_pose=Pose.from_xyz(*xyz),
        pickable=True,
    )
    return SimObject.from_params(params, sim_core=sim)


def run(sim: MultiRobotSimulationCore, agent: Agent, steps: int = 3000) -> None:
    for _ in range(steps):
        sim.step_once()
        if agent.get_current_action() is None:
            return
    raise AssertionError("actions did not finish")


def test_joint_action_resolves_tolerance_and_wakes_on_arrival(
    sim: MultiRobotSimulationCore,
) -> None:
    arm = panda(sim)
    arm.joint_tolerance = {"panda_joint1": 0.05}
    action = JointAction({"panda_joint1": 1.0, "panda_joint2": 0.3})
    calls = []
    original = action.update
    action.update = lambda agent, dt: (calls.append(sim.step_count), original(agent, dt))  # type: ignore[method-assign]
    arm.add_action(action)
    run(sim, arm)
    assert action.status is ActionStatus.COMPLETED and action.tolerance == {"panda_joint1": 0.05}
    # Done as soon as every joint is within its tolerance; the joints still land exactly.
    assert 0.95 <= arm.get_joint_state("panda_joint1") < 1.0
    assert abs(arm.get_joint_state("panda_joint2") - 0.3) <= 0.01
    # Checked once at start, then woken once when the kinematic joints arrive: no polling.
    assert len(calls) == 2 and calls[0] == 0
    for _ in range(50):
        sim.step_once()
    assert arm.get_joint_state("panda_joint1") == 1.0


def test_a_loose_tolerance_finishes_a_kinematic_joint_action_early(
    sim: MultiRobotSimulationCore,
) -> None:
    loose, tight = (
        panda(sim),
        Agent.from_urdf("panda", Pose.from_xyz(2, 0, 0), sim_core=sim, use_fixed_base=True),
    )
    targets = [1.0, 0.5, 0.0, -1.5, 0.0, 1.5, 0.5, 0.02, 0.02]
    done_at: dict[str, int] = {}
    worst: dict[str, float] = {}

    def completed(agent: Agent, action: JointAction) -> None:
        done_at[agent.name] = sim.step_count
        now = list(agent.get_joint_positions().values())
        worst[agent.name] = max(abs(p - t) for p, t in zip(now, targets, strict=True))

    sim.on("action_completed", completed)
    loose.add_action(JointAction(targets, tolerance=0.3))
    tight.add_action(JointAction(targets))
    for _ in range(1000):
        sim.step_once()
    assert done_at[loose.name] < done_at[tight.name]
    assert 0.01 < worst[loose.name] <= 0.3 and worst[tight.name] <= 0.01


def test_joint_action_bad_targets_fail_with_the_reason(sim: MultiRobotSimulationCore) -> None:
    arm = panda(sim)
    action = JointAction([0.0, 0.0])
    arm.add_action(action)
    assert action.status is ActionStatus.FAILED and "takes 9 joint targets" in (
        action.error_message or ""
    )


def test_pose_action_reachable_and_unreachable(sim: MultiRobotSimulationCore) -> None:
    arm = panda(sim)
    good, bad = PoseAction((0.45, 0.1, 0.4)), PoseAction((2.5, 0.0, 0.5))
    arm.add_action_sequence([good, bad])
    run(sim, arm)
    assert good.status is ActionStatus.COMPLETED
    assert bad.status is ActionStatus.FAILED and bad.error_message == "IK target was not reachable"
    with pytest.raises(ValueError):
        PoseAction((0.5, np.nan, 0.5))


def test_arm_picks_a_box_and_places_it_where_asked(sim: MultiRobotSimulationCore) -> None:
    arm = panda(sim)
    box = cube(sim, (0.5, 0.2, 0.05))
    place = Pose.from_yaw(0.35, -0.35, 0.05, 0.5)
    arm.add_action_sequence(
        [
            Pick(
                target_object_id=box.object_id,
                ee_target_position=(0.5, 0.2, 0.05),
                use_approach=False,
            ),
            PoseAction((0.4, -0.3, 0.35)),
            Drop(place, ee_target_position=(0.35, -0.35, 0.07), use_approach=False),
        ]
    )
    carried = []
    sim.on(
        "action_completed",
        lambda a, act: carried.append(isinstance(act, PoseAction) and box.is_attached()),
    )
    offsets = []
    for _ in range(3000):
        sim.step_once()
        if box.is_attached():  # riding in the gripper: a fixed pose in the end effector's frame
            offsets.append(arm.get_end_effector_pose().inverse().compose(box.get_pose()).position)
        if arm.get_current_action() is None:
            break
    assert carried == [False, True, False]
    assert np.ptp(np.array(offsets), axis=0).max() < 1e-6 and len(offsets) > 10
    assert box.get_pose() == place and not box.is_attached()


def test_pick_with_unreachable_arm_target() -> None:
    with make_sim() as sim:
        arm = panda(sim)
        box = cube(sim, (0.5, 0, 0.05))
        strict = Pick(
            target_object_id=box.object_id,
            ee_target_position=(3, 0, 0),
            use_approach=False,
            continue_on_ik_failure=False,
        )
        arm.add_action(strict)
        run(sim, arm)
        assert (
            strict.status is ActionStatus.FAILED
            and strict.error_message == "IK target was not reachable"
        )
        assert not box.is_attached()
        lenient = Pick(
            target_object_id=box.object_id, ee_target_position=(3, 0, 0), use_approach=False
        )
        arm.add_action(lenient)
        run(sim, arm)
        # It carries on after the IK failure, but the gripper ends too far from the cube to take
        # it: no pick at a distance.
        assert lenient.status is ActionStatus.FAILED
        assert "beyond its reach of 0.3 m" in (lenient.error_message or "")
        assert not box.is_attached()
        stretched = Pick(target_object_id=box.object_id, ee_target_position=(3, 0, 0), reach=0.5)
        arm.add_action(stretched)
        run(sim, arm)
        assert stretched.status is ActionStatus.COMPLETED and box.attached_to is arm


def test_mobile_manipulator_drives_then_picks_with_its_arm(sim: MultiRobotSimulationCore) -> None:
    mm = Agent.from_urdf(
        "mobile_manipulator", Pose.from_xyz(0, 0, 0), sim_core=sim, motion_mode="differential"
    )
    box = cube(sim, (3.0, 0.0, 0.3))
    mm.add_action(
        Pick(
            target_object_id=box.object_id,
            joint_targets={"shoulder_lift_joint": 0.8, "elbow_joint": 1.0},
            approach_offset=1.5,
            stand_offset=0.82,  # the gripper is 0.82 m ahead of the base with these joints
        )
    )
    run(sim, mm, 5000)
    assert box.attached_to is mm
    ee = mm.get_end_effector_pose().position
    before = np.array(box.get_pose().position) - ee
    mm.add_action(Drop(Pose.from_xyz(-2, 1, 0.3)))  # at the base: the gripper is 0.8 m off
    run(sim, mm, 5000)
    assert box.attached_to is mm and "gripper" in sim.actions.failure_reasons.most_common()[0][0]
    mm.add_action(Drop(Pose.from_xyz(-2, 1, 0.3), drop_offset=0.82, approach_offset=1.5))
    run(sim, mm, 5000)
    assert box.get_pose().position == (-2.0, 1.0, 0.3)
    assert np.linalg.norm(before) < 1.0  # it rode near the gripper, not at the base origin


def test_joint_action_under_physics_polls_and_completes() -> None:
    with make_sim(physics=True, timestep=1 / 240) as sim:
        arm = Agent.from_urdf("kuka_iiwa", sim_core=sim, use_fixed_base=True)
        action = JointAction([0.3, 0.4, 0, -0.8, 0, 0.5, 0], tolerance=0.02, max_force=300)
        arm.add_action(action)
        assert action.polls
        run(sim, arm, 2000)
        assert action.status is ActionStatus.COMPLETED
