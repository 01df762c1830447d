"""The continuous task: robots with their real kinematics on a site, lidar observations that
are the lidar's own scans, goals in the robot's frame, the simulator's collisions, seeds that
repeat, PettingZoo's own API test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.rl.continuous import FleetTask, FleetTaskConfig
from fleetsim.rl.envs import FleetParallelEnv
from tests.rl import worlds

NODES = [{"name": f"n{i}_{j}", "x": 2.0 * i, "y": 2.0 * j} for i in range(5) for j in range(5)]
LANES = [{"from": f"n{i}_{j}", "to": f"n{i + 1}_{j}", "bidirectional": True}
         for i in range(4) for j in range(5)]  # fmt: skip


def world(count: int) -> tuple[MultiRobotSimulationCore, list[Agent]]:
    return worlds.world(count, NODES, LANES)


def toward_goal(obs: np.ndarray) -> np.ndarray:
    angle = np.arctan2(obs[:, -3], obs[:, -4])
    return np.column_stack((np.where(np.abs(angle) < 0.5, 1.0, 0.0), 2.0 * angle))


def test_observations_are_the_lidars_and_the_goal_in_the_robots_frame() -> None:
    sim, robots = world(3)
    with sim:
        task = FleetTask(sim, robots, FleetTaskConfig(beams=16, range_max=6.0))
        obs = task.reset(seed=3)
        assert obs.shape == (3, 20) and obs.dtype == np.float32
        for k, (robot, lidar) in enumerate(zip(robots, task.lidars, strict=True)):
            own = np.nan_to_num(lidar.ranges / 6.0, nan=1.0, posinf=1.0)
            np.testing.assert_allclose(obs[k, :16], own, rtol=1e-6)
            pose = robot.get_pose()
            d = task.goals[k] - np.array(pose.position[:2])
            ahead = math.cos(pose.yaw) * d[0] + math.sin(pose.yaw) * d[1]
            left = -math.sin(pose.yaw) * d[0] + math.cos(pose.yaw) * d[1]
            assert obs[k, 16:18] == pytest.approx((ahead / 6.0, left / 6.0), abs=1e-5)


def test_driving_to_goals_scores_and_lifelong_goals_renew() -> None:
    sim, robots = world(4)
    with sim:
        task = FleetTask(sim, robots)
        obs, reached, total = task.reset(seed=0), 0, 0.0
        for _ in range(400):
            obs, rewards, terminated, _, state = task.step(toward_goal(obs))
            reached += int(state.reached.sum())
            total += float(rewards.sum())
            assert not terminated.any()
        assert reached >= 8 and total > reached  # (progress too)
        for robot in robots:  # (real kinematics: within the robot's limits)
            (vx, vy, _), _ = robot.get_velocity()
            assert math.hypot(vx, vy) <= robot.spawn_params.max_linear_vel + 1e-9


def test_collisions_are_the_simulators() -> None:
    sim, robots = world(2)
    with sim:
        task = FleetTask(sim, robots, FleetTaskConfig(lifelong=True))
        task.reset(seed=1)
        robots[0].set_pose(Pose.from_yaw(4.0, 4.0, 0.0, 0.0))
        robots[1].set_pose(Pose.from_yaw(5.5, 4.0, 0.0, math.pi))
        before, hits = sim.collision_count, 0
        for _ in range(30):
            *_, state = task.step(np.array([[0.5, 0.0], [0.5, 0.0]]))
            hits += int(state.collided.sum())
        assert sim.collision_count > before and hits == 2 * (sim.collision_count - before)


def test_the_same_seed_and_actions_repeat_bit_for_bit() -> None:
    def run() -> list[bytes]:
        sim, robots = world(3)
        with sim:
            task = FleetTask(sim, robots)
            obs = task.reset(seed=7)
            out = [obs.tobytes()]
            for _ in range(60):
                obs, rewards, *_ = task.step(toward_goal(obs))
                out += [obs.tobytes(), rewards.tobytes()]
            return out

    assert run() == run()


def test_pettingzoo_api_and_bad_input() -> None:
    sim, robots = world(3)
    with sim:
        env = FleetParallelEnv(FleetTask(sim, robots, FleetTaskConfig(max_steps=30)))
        parallel_api_test(env, num_cycles=40)
        with pytest.raises(ConfigError, match=r"\(3, 2\) finite numbers"):
            env.task.step(np.zeros((3, 3)))
        with pytest.raises(ConfigError, match="got NaN or infinite values"):
            env.task.step(np.full((3, 2), np.nan))
        env.reset(seed=1)
        with pytest.raises(ConfigError, match="no agent named 'r9'; the agents are r0, r1, r2"):
            env.step({"r9": np.zeros(2)})
        with pytest.raises(ConfigError, match=r"r1's action must be 2 numbers \(speed m/s, turn "
                                              r"rad/s\), got shape \(3,\)"):  # fmt: skip
            env.step({"r1": np.zeros(3)})
        with pytest.raises(ConfigError, match="max_steps must be >= 1, got 0"):
            FleetTaskConfig(max_steps=0)
    sim, robots = world(2)
    with sim, FleetTask(sim, robots) as fresh:
        with pytest.raises(FleetSimError, match=r"no episode yet: call reset\(seed\) first"):
            fresh.step(np.zeros((2, 2)))
        fresh.reset(seed=0)
        fresh.step(np.zeros((2, 2)))  # (after a reset: steps)
    bare = MultiRobotSimulationCore(SimulationParams(timestep=0.1))
    with bare, pytest.raises(ConfigError, match="needs a site"):
        FleetTask(bare, [])


def test_from_a_scenario() -> None:
    """The warehouse's robots as learners, without its fleet manager; the task closes it."""
    with FleetTask.from_scenario("warehouse", ["robots[0].start.random=6"]) as task:
        obs = task.reset(seed=0)
        assert obs.shape == (6, 36) and len(task.robots) == 6
        assert task.built.plugins == []  # (its fleet manager taken out)
        at = [robot.get_pose().position for robot in task.robots]
        for _ in range(50):  # (told to stand: nothing else drives them)
            *_, state = task.step(np.zeros((6, 2)))
        assert [robot.get_pose().position for robot in task.robots] == at
        for _ in range(20):
            obs, *_, state = task.step(toward_goal(obs))
        assert (state.progress > 0).any()
    with pytest.raises(FleetSimError):
        FleetTask.from_scenario("no_such_scenario")


def test_gymnasium_single_robot_env() -> None:
    from gymnasium.utils.env_checker import check_env

    from fleetsim.rl.envs import FleetSingleEnv

    env = FleetSingleEnv(FleetTask.from_scenario("warehouse", ["robots[0].start.random=4"]))
    try:
        check_env(env, skip_render_check=True)
        obs, _ = env.reset(seed=0)
        assert obs.shape == (36,)
        obs, reward, *_, info = env.step(env.action_space.sample())
        assert set(info) == {"reached", "collided"} and isinstance(reward, float)
    finally:
        env.close()
