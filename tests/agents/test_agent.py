import math

import numpy as np
import pybullet as pb
import pytest

from fleetsim import (
    Agent,
    AgentSpawnParams,
    ConfigError,
    MultiRobotSimulationCore,
    ObjectRemovedError,
    Pose,
)
from fleetsim.models import UnknownModelError

from ..conftest import make_sim


def test_from_urdf_by_name_stands_on_the_floor_in_the_link_frame(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = Agent.from_urdf(
        "mobile_robot", Pose.from_yaw(1, 2, 0, 0.5), sim_core=sim, motion_mode="differential"
    )
    assert robot.profile.robot_type == "mobile" and robot.name.startswith("agent_")
    assert robot.get_pose().isclose(Pose.from_yaw(1, 2, 0, 0.5), pos_tol=1e-6, angle_tol=1e-6)
    com, _ = pb.getBasePositionAndOrientation(robot.object_id, physicsClientId=sim.client)
    np.testing.assert_allclose(com, (1, 2, 0.155), atol=1e-6)  # PyBullet holds the inertial frame
    robot.set_pose(Pose.from_xyz(5, 5, 0))
    com, _ = pb.getBasePositionAndOrientation(robot.object_id, physicsClientId=sim.client)
    np.testing.assert_allclose(com, (5, 5, 0.155), atol=1e-6)
    row = sim.world.bodies.row(robot.handle)
    sim.step_once()
    lo, hi = sim.world.bodies["aabb_min"][row], sim.world.bodies["aabb_max"][row]
    # Measured with getAABB, which pads round shapes by a small collision margin.
    assert lo[2] == pytest.approx(0.0, abs=0.01) and hi[2] == pytest.approx(0.23, abs=0.01)


def test_from_params_and_errors_leave_nothing_behind(sim: MultiRobotSimulationCore) -> None:
    params = AgentSpawnParams(
        urdf_path="simple_cube", initial_pose=Pose.from_xyz(3, 0, 0), name="cube", max_linear_vel=2
    )
    cube = Agent.from_params(params, sim_core=sim)
    assert cube.name == "cube" and cube.spawn_params.max_linear_vel == 2
    before = pb.getNumBodies(physicsClientId=sim.client)
    with pytest.raises(UnknownModelError, match="did you mean 'mobile_robot'"):
        Agent.from_urdf("mobile_robto", sim_core=sim)
    for bad in (
        {"max_linear_vel": 0},
        {"motion_mode": "sideways"},
        {"max_angular_accel": math.inf},
        {"mass": -1},
    ):
        with pytest.raises(ConfigError):
            Agent.from_urdf("simple_cube", sim_core=sim, **bad)
    assert pb.getNumBodies(physicsClientId=sim.client) == before
    assert len(sim.world.motion.agents) == 1


def test_drive_to_goal_and_read_velocity(any_sync_sim: MultiRobotSimulationCore) -> None:
    sim = any_sync_sim
    robot = Agent.from_urdf("simple_cube", sim_core=sim, max_linear_vel=1.0, max_linear_accel=2.0)
    robot.set_goal(Pose.from_xyz(2, 0, 0), align_orientation=False)
    assert robot.is_moving and not robot.is_goal_reached()
    speeds = []
    for _ in range(300):
        sim.step_once()
        speeds.append(robot.linear_velocity[0])
    assert max(speeds) == pytest.approx(1.0) and robot.is_goal_reached() and not robot.is_moving
    assert robot.get_pose().position == (2.0, 0.0, 0.0) and robot.get_velocity() == (
        (0.0, 0.0, 0.0),
        0.0,
    )
    sim.sync()
    com, _ = pb.getBasePositionAndOrientation(robot.object_id, physicsClientId=sim.client)
    np.testing.assert_allclose(com, (2, 0, 0.2), atol=1e-6)


def test_stop_update_and_cmd_vel(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf("mobile_robot", sim_core=sim, motion_mode="differential")
    robot.set_goal(Pose.from_xyz(10, 0, 0))
    for _ in range(50):
        robot.update(0.01)  # this agent alone
    x = robot.get_pose().x
    assert 0 < x < 10
    robot.stop()
    sim.step_once()
    assert robot.get_pose().x == x and not robot.is_moving
    with pytest.raises(ConfigError, match="cannot move sideways"):
        robot.controller.set_cmd_vel(0.5, 0.2)
    robot.controller.set_cmd_vel(0.5, 0.0, 0.0, timeout=1.0)
    for _ in range(200):
        sim.step_once()
    assert robot.get_pose().x > x + 0.3 and not robot.is_moving


def test_fixed_base_agents_cannot_drive(sim: MultiRobotSimulationCore) -> None:
    arm = Agent.from_urdf("arm_robot", sim_core=sim, use_fixed_base=True)
    assert arm.profile.robot_type == "arm" and not arm.is_moving
    with pytest.raises(ConfigError, match="fixed base"):
        arm.set_goal(Pose.from_xyz(1, 0, 0))


def test_removal_and_reset(sim: MultiRobotSimulationCore) -> None:
    a = Agent.from_urdf("simple_cube", sim_core=sim)
    b = Agent.from_urdf("simple_cube", Pose.from_xyz(3, 0, 0), sim_core=sim)
    a.set_goal(Pose.from_xyz(0, 5, 0))
    b.set_goal(Pose.from_xyz(3, 5, 0))
    sim.step_once()
    a.remove()
    for _ in range(10):
        sim.step_once()  # b keeps driving, a's row is gone
    assert len(sim.world.motion.agents) == 1 and b.get_pose().y > 0
    with pytest.raises(ObjectRemovedError):
        a.get_pose()
    sim.reset()
    assert len(sim.world.motion.agents) == 0
    c = Agent.from_urdf("simple_cube", sim_core=sim)
    c.set_goal(Pose.from_xyz(1, 0, 0))
    for _ in range(300):
        sim.step_once()
    assert c.is_goal_reached()


def test_same_seed_same_trajectories() -> None:
    def trajectory(seed: int) -> np.ndarray:
        with make_sim(seed=seed, timestep=0.1) as sim:
            robots = [
                Agent.from_urdf("simple_cube", Pose.from_xyz(i, 0, 0), sim_core=sim)
                for i in range(20)
            ]
            goals = sim.rng.uniform(-10, 10, size=(20, 2))
            for r, (x, y) in zip(robots, goals, strict=True):
                r.set_goal(Pose.from_xyz(x, y, 0))
            for _ in range(100):
                sim.step_once()
            return sim.get_poses(robots)[0]

    np.testing.assert_array_equal(trajectory(5), trajectory(5))
    assert not np.array_equal(trajectory(5), trajectory(6))


def test_set_waypoints_from_arrays(sim: MultiRobotSimulationCore) -> None:
    robot = Agent.from_urdf(
        "mobile_robot",
        Pose.from_xyz(0, 0, 0),
        sim_core=sim,
        motion_mode="omnidirectional",
        max_linear_vel=2.0,
    )
    with pytest.raises(ConfigError, match=r"positions must be \(K, 2\) or \(K, 3\)"):
        robot.set_waypoints([1.0, 2.0])
    with pytest.raises(ConfigError, match="one value per waypoint"):
        robot.set_waypoints([[1, 0], [2, 0]], yaws=[0.0])
    with pytest.raises(ConfigError, match="speed_limits must be > 0"):
        robot.set_waypoints([[1, 0]], speed_limits=[0.0])
    assert not robot.is_moving  # nothing was started by the bad calls
    robot.set_waypoints([[2, 0], [2, 2]], speed_limits=[0.5, np.inf])
    fastest_first = 0.0
    for _ in range(round(10.0 / sim.params.timestep)):
        sim.step_once()
        if robot.get_pose().position[1] < 0.01:
            fastest_first = max(fastest_first, float(np.hypot(*robot.get_velocity()[0][:2])))
        if robot.is_goal_reached():
            break
    assert robot.get_pose().position[:2] == pytest.approx((2.0, 2.0), abs=0.06)
    assert fastest_first <= 0.5 + 1e-6


def test_cmd_vel_is_clipped_to_a_differential_agents_limits(sim: MultiRobotSimulationCore) -> None:
    """Commands far above the limits drive at the limits: linear speed and turn rate."""
    robot = Agent.from_urdf(
        "mobile_robot",
        sim_core=sim,
        motion_mode="differential",
        max_linear_vel=0.8,
        max_angular_vel=1.2,
    )
    fastest, fastest_turn = 0.0, 0.0
    for _ in range(300):  # 3 s at the default 0.01 s: past the ramp up
        robot.controller.set_cmd_vel(5.0, 0.0, 0.0)
        sim.step_once()
        fastest = max(fastest, float(np.hypot(*robot.linear_velocity[:2])))
    assert fastest == pytest.approx(0.8, abs=1e-6)
    robot.stop()
    for _ in range(300):
        robot.controller.set_cmd_vel(0.0, 0.0, -9.0)
        sim.step_once()
        fastest_turn = max(fastest_turn, abs(float(robot.angular_velocity)))
    assert fastest_turn == pytest.approx(1.2, abs=1e-6)
