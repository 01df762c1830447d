"""Arms: kinematic and motor joints, inverse kinematics, tolerances, on the required robots."""

import numpy as np
import pybullet as pb
import pytest

from fleetsim import Agent, ConfigError, IKParams, MultiRobotSimulationCore, Pose

from ..conftest import make_sim

ARMS = ["panda", "kuka_iiwa", "arm_robot", "rail_arm_robot", "mobile_manipulator"]


def load(sim: MultiRobotSimulationCore, model: str, **kw: object) -> Agent:
    return Agent.from_urdf(
        model,
        Pose.from_xyz(0, 0, 0),
        sim_core=sim,
        use_fixed_base=model != "mobile_manipulator",
        **kw,
    )


def random_configs(arm: Agent, n: int, seed: int) -> np.ndarray:
    lo, hi = arm.joint_limits()
    return np.random.default_rng(seed).uniform(lo, hi, size=(n, len(lo)))


def fk(arm: Agent, sim: MultiRobotSimulationCore, q: np.ndarray) -> np.ndarray:
    """End-effector position for joint values q, computed by PyBullet, then put back."""
    joints, idx = sim.world.backend.joints, [i for i, _ in arm.controllable_joints]
    before = joints.read_positions(arm.object_id, idx)
    joints.write_positions(arm.object_id, idx, q.tolist())
    pos = np.array(joints.link_pose(arm.object_id, arm.profile.ee_link_index)[0])
    joints.write_positions(arm.object_id, idx, before.tolist())
    return pos


def test_kinematic_joints_respect_velocity_limits_and_land_on_targets(
    sim: MultiRobotSimulationCore,
) -> None:
    arm = load(sim, "panda")
    assert not arm.uses_physics_joints
    limits = arm.joint_velocity_limits()
    target = random_configs(arm, 1, seed=2)[0]
    arm.set_all_joints_targets(target)
    history = [np.array(list(arm.get_joint_positions().values()))]
    while not arm.are_joints_at_targets(tolerance=0.0):
        sim.step_once()
        history.append(np.array(list(arm.get_joint_positions().values())))
        assert len(history) < 1000
    speed = np.abs(np.diff(history, axis=0)) / sim.params.timestep
    assert np.all(speed <= limits * (1 + 1e-9))
    np.testing.assert_array_equal(history[-1], target)
    sim.sync()  # PyBullet gets the cached positions (lazy sync)
    idx = [i for i, _ in arm.controllable_joints]
    np.testing.assert_allclose(
        sim.world.backend.joints.read_positions(arm.object_id, idx), target, atol=1e-9
    )


def test_missing_velocity_limits_fall_back() -> None:
    with make_sim() as sim:
        arm = load(sim, "kuka_iiwa")  # its URDF says 10 rad/s
        assert np.all(arm.joint_velocity_limits() == 10.0)
    from fleetsim.agents.joints import FALLBACK_PRISMATIC_VEL, FALLBACK_REVOLUTE_VEL

    assert (FALLBACK_REVOLUTE_VEL, FALLBACK_PRISMATIC_VEL) == (2.0, 0.5)


def test_physics_mode_reaches_targets_with_motors() -> None:
    with make_sim(physics=True, timestep=1 / 240) as sim:
        arm = load(sim, "kuka_iiwa")
        assert arm.uses_physics_joints
        target = [0.4, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0]
        arm.set_all_joints_targets(target, max_force=300)
        for _ in range(960):
            sim.step_once()
        assert arm.are_joints_at_targets(tolerance=0.02)
        np.testing.assert_allclose(list(arm.get_joint_positions().values()), target, atol=0.02)


@pytest.mark.parametrize("model", ["panda", "kuka_iiwa"])
def test_ik_reaches_at_least_95_percent_of_reachable_targets(
    sim: MultiRobotSimulationCore, model: str
) -> None:
    arm = load(sim, model)
    configs = random_configs(arm, 60, seed=7)
    solved = 0
    for q in configs:
        target = fk(arm, sim, q)
        result = arm.solve_ik(target)
        solved += (
            result.reachable and np.linalg.norm(fk(arm, sim, result.positions) - target) <= 0.02
        )
    assert solved >= 0.95 * len(configs)


def test_ik_fails_cleanly_outside_the_workspace(sim: MultiRobotSimulationCore) -> None:
    arm = load(sim, "panda")
    before = arm.get_joint_positions()
    assert arm.move_end_effector((4.0, 0.0, 0.5)) is False
    rows = arm._rows()
    targets = sim.world.joints["target"][rows]
    assert np.all(targets >= sim.world.joints["lower"][rows]) and np.all(
        targets <= sim.world.joints["upper"][rows]
    )
    assert arm.get_joint_positions() == before  # the search left the real joints alone
    for _ in range(300):
        sim.step_once()
    assert not arm.are_ee_at_target()  # best effort: reaching towards it


def test_panda_mid_workspace_and_a_second_simulation() -> None:
    with make_sim() as a, make_sim() as b:
        pa, pb_ = load(a, "panda"), load(b, "panda")
        pa.set_all_joints_targets({"panda_joint1": 1.0})
        assert pb_.move_end_effector((0.5, 0.0, 0.5))
        for _ in range(300):
            b.step_once()
        assert pb_.are_ee_at_target(0.01)
        assert np.linalg.norm(np.array(pb_.get_end_effector_pose().position) - (0.5, 0, 0.5)) < 0.01
        assert pa.get_joint_state("panda_joint1") == 0.0  # a never stepped


@pytest.mark.parametrize("model", ARMS)
def test_every_required_robot_reaches_a_pose(sim: MultiRobotSimulationCore, model: str) -> None:
    arm = load(sim, model)
    lo, hi = arm.joint_limits()
    target = fk(arm, sim, lo + 0.4 * (hi - lo))
    assert arm.move_end_effector(target)
    for _ in range(1000):
        sim.step_once()
        if arm.are_joints_at_targets():
            break
    assert arm.are_ee_at_target(0.02)


def test_ik_joint_names_and_wheels_are_locked(sim: MultiRobotSimulationCore) -> None:
    mm = load(sim, "mobile_manipulator")
    assert [n for _, n in mm.controllable_joints][:1] == ["shoulder_pan_joint"]  # wheels excluded
    only_pan = load(sim, "arm_robot", ik_params=IKParams(ik_joint_names=("shoulder_pan_joint",)))
    start = only_pan.get_joint_positions()
    result = only_pan.solve_ik(only_pan.get_end_effector_pose().position + np.array([0, 0.1, 0]))
    moved = {
        name for name, q in zip(start, result.positions, strict=True) if abs(q - start[name]) > 1e-9
    }
    assert moved <= {"shoulder_pan_joint"}
    with pytest.raises(ConfigError, match="no joints"):
        load(sim, "arm_robot", ik_params=IKParams(ik_joint_names=("elbow",))).solve_ik(
            (0.3, 0, 0.5)
        )


def test_tolerance_chain(sim: MultiRobotSimulationCore) -> None:
    arm = load(sim, "arm_robot")  # joint indices 0..4
    assert list(arm.tolerances()) == [0.01] * 5  # class default
    arm.joint_tolerance = 0.2
    assert list(arm.tolerances()) == [0.2] * 5
    arm.joint_tolerance = {"elbow_joint": 0.5}
    assert list(arm.tolerances()) == [0.01, 0.01, 0.5, 0.01, 0.01]
    arm.joint_tolerance = [0.1, 0.2]  # by joint index; the rest fall back
    assert list(arm.tolerances()) == [0.1, 0.2, 0.01, 0.01, 0.01]
    assert list(arm.tolerances(0.05)) == [0.05] * 5  # the action's own wins
    spawned = load(sim, "arm_robot", joint_tolerance=0.3)
    assert spawned.joint_tolerance == 0.3


def test_joint_errors_name_the_joint_and_the_fix(sim: MultiRobotSimulationCore) -> None:
    arm = load(sim, "panda")
    with pytest.raises(
        ConfigError, match="no controllable joint 'panda_joint9'; did you mean 'panda_joint7'"
    ):
        arm.set_joint_target("panda_joint9", 0.0)
    with pytest.raises(ConfigError, match=r"outside its limits \[-3.142, 0\]"):
        arm.set_joint_target("panda_joint4", 1.0)
    with pytest.raises(ConfigError, match="takes 9 joint targets"):
        arm.set_all_joints_targets([0.0, 0.0])
    with pytest.raises(ConfigError, match="no controllable joints"):
        Agent.from_urdf("simple_cube", sim_core=sim).set_joint_target(0, 0.0)
    with pytest.raises(ConfigError, match="no link 'hand'"):
        arm.move_end_effector((0.5, 0, 0.5), end_effector_link="hand")
    assert pb.getNumBodies(physicsClientId=sim.client) == 3  # floor, panda, cube: nothing half-made
