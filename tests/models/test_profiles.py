import math

import numpy as np
import pybullet as pb
import pytest

from fleetsim.models import auto_detect_profile, detect_robot_type, resolve_urdf

from ..conftest import make_sim

EXPECTED = {
    # name: (robot type, end-effector link)
    "mobile_robot": ("mobile", None),
    "arm_robot": ("arm", "end_effector"),
    "mobile_manipulator": ("mobile_manipulator", "end_effector"),
    "rail_arm_robot": ("arm", "end_effector"),
    "simple_cube": ("static", None),
    "panda": ("arm", "panda_grasptarget"),
    "kuka_iiwa": ("arm", "lbr_iiwa_link_7"),
    "r2d2": ("mobile", None),
    "husky": ("mobile", None),
    "racecar": ("mobile", None),
    "xarm6": ("arm", "link6"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_model_loads_and_profiles(name: str) -> None:
    robot_type, ee = EXPECTED[name]
    with make_sim() as sim:
        body = pb.loadURDF(resolve_urdf(name), physicsClientId=sim.client)
        profile = auto_detect_profile(body, sim.client)
        assert (profile.robot_type, profile.ee_link_name) == (robot_type, ee)
        assert detect_robot_type(body, sim.client) == robot_type
        if ee is not None:
            assert (
                pb.getJointInfo(body, profile.ee_link_index, physicsClientId=sim.client)[
                    12
                ].decode()
                == ee
            )
        n = len(profile.movable_joint_names)
        assert len(profile.joint_lower_limits) == len(profile.joint_upper_limits) == n
        for name_, lo, hi in zip(
            profile.movable_joint_names,
            profile.joint_lower_limits,
            profile.joint_upper_limits,
            strict=True,
        ):
            assert lo <= hi
            assert math.isinf(hi) == (name_ in profile.wheel_joint_names)


def test_profile_of_a_body_does_not_reload_and_matches_the_file() -> None:
    with make_sim() as sim:
        body = pb.loadURDF(resolve_urdf("panda"), physicsClientId=sim.client)
        before = pb.getNumBodies(physicsClientId=sim.client)
        in_place = auto_detect_profile(body, sim.client)
        assert pb.getNumBodies(physicsClientId=sim.client) == before
        assert auto_detect_profile("panda") == in_place  # scratch client
        assert auto_detect_profile("panda", sim.client) == in_place  # loaded, then removed
        assert pb.getNumBodies(physicsClientId=sim.client) == before


def test_bundled_robot_facts() -> None:
    arm = auto_detect_profile("arm_robot")
    assert sum(1 for n in arm.movable_joint_names if n.endswith("_joint")) >= 4
    assert all(v > 0 for v in arm.joint_max_velocities)
    rail = auto_detect_profile("rail_arm_robot")
    assert rail.movable_joint_names[0] == "rail_joint" and rail.joint_upper_limits[0] == 2.5
    mm = auto_detect_profile("mobile_manipulator")
    assert mm.wheel_joint_names == ("left_wheel_joint", "right_wheel_joint")


@pytest.mark.parametrize("name", ["mobile_robot", "mobile_manipulator", "simple_cube"])
def test_bundled_mobile_robots_rest_upright_on_the_floor(name: str) -> None:
    """Sane inertias and geometry: dropped from 2 cm, they settle level at floor height."""
    with make_sim(physics=True, timestep=1 / 240) as sim:
        body = pb.loadURDF(resolve_urdf(name), [0, 0, 0.02], physicsClientId=sim.client)
        for _ in range(480):
            pb.stepSimulation(physicsClientId=sim.client)
        com_pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=sim.client)
        # PyBullet reports the base's inertial frame; the URDF link frame sits below it.
        inertial = pb.getDynamicsInfo(body, -1, physicsClientId=sim.client)[3]
        pos, _ = pb.multiplyTransforms(com_pos, orn, *pb.invertTransform(inertial, (0, 0, 0, 1)))
        assert abs(pos[2]) < 0.02 and np.hypot(pos[0], pos[1]) < 0.02
        roll, pitch, _ = pb.getEulerFromQuaternion(orn)
        assert abs(roll) < 0.05 and abs(pitch) < 0.05


@pytest.mark.parametrize("name", ["arm_robot", "rail_arm_robot"])
def test_bundled_arms_hold_a_pose_under_motor_control(name: str) -> None:
    with make_sim(physics=True, timestep=1 / 240) as sim:
        body = pb.loadURDF(resolve_urdf(name), useFixedBase=True, physicsClientId=sim.client)
        profile = auto_detect_profile(body, sim.client)
        target = [0.3 * (i % 2) for i in range(len(profile.movable_joint_indices))]
        pb.setJointMotorControlArray(
            body,
            profile.movable_joint_indices,
            pb.POSITION_CONTROL,
            targetPositions=target,
            physicsClientId=sim.client,
        )
        for _ in range(720):
            pb.stepSimulation(physicsClientId=sim.client)
        states = pb.getJointStates(body, profile.movable_joint_indices, physicsClientId=sim.client)
        np.testing.assert_allclose([s[0] for s in states], target, atol=0.05)
