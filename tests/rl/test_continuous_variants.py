"""The continuous task's variants: waypoint actions, warehouse stations, faults as a source of
robustness, and its picture from above."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from fleetsim import Agent, MultiRobotSimulationCore, Pose
from fleetsim.errors import ConfigError
from fleetsim.faults import FaultPlan, RobotFaults
from fleetsim.rl.continuous import FleetTask, FleetTaskConfig
from fleetsim.rl.envs import FleetParallelEnv
from fleetsim.rl.top_view import GOAL, HELD, ROBOT
from tests.rl import worlds

# a row of nodes: pick-ups at the west end, drop-offs at the east end
NODES = [
    {"name": f"n{i}", "x": 2.0 * i, "y": 0.0, "pickup": i < 2, "dropoff": i >= 8} for i in range(10)
]
LANES = [{"from": f"n{i}", "to": f"n{i + 1}", "bidirectional": True} for i in range(9)]


def world(
    count: int, nodes: list[dict[str, object]] = NODES
) -> tuple[MultiRobotSimulationCore, list[Agent]]:
    return worlds.world(count, nodes, LANES)


def behind(robot: Agent) -> np.ndarray:
    """A point of the robot's disc behind its centre (where no heading line is drawn)."""
    pose = robot.get_pose()
    return np.array([[pose.x - 0.1 * math.cos(pose.yaw), pose.y - 0.1 * math.sin(pose.yaw)]])


def test_waypoints_are_driven_to_by_the_robots_own_controller() -> None:
    sim, robots = world(2)
    with sim:
        task = FleetTask(sim, robots, FleetTaskConfig(actions="waypoint", range_max=5.0))
        task.reset(seed=0)
        robots[0].set_pose(Pose.from_yaw(0.0, 0.0, robots[0].get_pose().z, 0.0))
        robots[1].set_pose(Pose.from_yaw(6.0, 3.0, robots[1].get_pose().z, math.pi / 2))
        top = float(task.max_speed[0])
        speeds = []
        for _ in range(60):  # 3 m ahead of the first; 2 m to the left of the second, then 9 m
            point = np.array([[3.0, 0.0], [0.0, 2.0]]) if not speeds else np.zeros((2, 2))
            if speeds:
                point[0] = (3.0 - robots[0].get_pose().x, 0.0)
                point[1] = (0.0, 9.0)  # beyond range_max: cut to 5 m
            task.step(point)
            speeds.append(float(math.hypot(*robots[1].get_velocity()[0][:2])))
        assert robots[0].get_pose().x == pytest.approx(3.0, abs=0.02)
        assert abs(robots[0].get_pose().y) < 1e-6  # straight on: it was facing the point
        assert max(speeds) <= top + 1e-9 and max(speeds) > 0.5 * top
        pose = robots[1].get_pose()
        assert pose.x < 6.0 - 1.0 and abs(pose.y - 3.0) < 1.0  # it drove off to its left (west)
        stand = robots[0].get_pose()
        task.step(np.zeros((2, 2)))  # (0, 0): stop where it is
        for _ in range(20):
            task.step(np.zeros((2, 2)))
        assert math.hypot(*robots[1].get_velocity()[0][:2]) < 1e-9
        assert robots[0].get_pose().x == pytest.approx(stand.x, abs=0.02)
        env = FleetParallelEnv(task)
        assert env.action_space("r0").high.tolist() == [5.0, 5.0]
        parallel_api_test(env, num_cycles=20)
        with pytest.raises(ConfigError, match=r"\(ahead m, left m\)"):
            task.step(np.zeros((2, 3)))


def test_station_goals_are_orders_pick_up_then_drop_off() -> None:
    sim, robots = world(3)
    with sim:
        config = FleetTaskConfig(goals="stations", goal_radius=0.3, lifelong=False, max_steps=900)
        task = FleetTask(sim, robots, config)
        obs = task.reset(seed=4)
        assert set(task.goals[:, 0].tolist()) <= {0.0, 2.0}  # pick-ups first
        delivered = np.zeros(3, dtype=bool)
        picked = np.zeros(3, dtype=bool)
        for _ in range(900):
            angle = np.arctan2(obs[:, -3], obs[:, -4])
            actions = np.column_stack((np.where(np.abs(angle) < 0.3, 1.0, 0.0), 2.0 * angle))
            obs, _, terminated, _, state = task.step(actions)
            picked |= task.carrying
            assert state.delivered is not None
            delivered |= state.delivered
            if terminated.all():
                break
        assert picked.all() and delivered.all() and terminated.all()
        assert set(task.goals[:, 0].tolist()) <= {16.0, 18.0}  # each ended at a drop-off


def test_stations_missing_from_the_floor_are_named() -> None:
    plain = [{"name": f"n{i}", "x": 2.0 * i, "y": 0.0} for i in range(10)]
    sim, robots = world(1, plain)
    with sim, pytest.raises(ConfigError, match="pickup and dropoff"):
        FleetTask(sim, robots, FleetTaskConfig(goals="stations"))
    with pytest.raises(ConfigError, match="choose velocity or waypoint"):
        FleetTaskConfig(actions="teleport")  # type: ignore[arg-type]


def _stop_plan() -> FaultPlan:
    return FaultPlan(robots=(RobotFaults("stop", rate_per_hour=1200.0, duration=(3.0, 3.0)),))


def test_faults_hold_robots_whatever_they_are_told_and_repeat_by_seed() -> None:
    def held_steps(seed: int) -> list[list[bool]]:
        sim, robots = world(3)
        with sim:
            task = FleetTask(sim, robots, faults=_stop_plan())
            task.reset(seed=seed)
            out = []
            for _ in range(150):
                before = [np.array(r.get_pose().position) for r in robots]
                _, _, _, _, state = task.step(np.tile([1.0, 0.0], (3, 1)))
                assert state.held is not None
                for k, robot in enumerate(robots):
                    if state.held[k]:  # braking, then standing: no faster than before
                        moved = np.hypot(*(np.array(robot.get_pose().position[:2]) - before[k][:2]))
                        assert moved <= task.max_speed[k] * 0.1 + 1e-9
                out.append(state.held.tolist())
            return out

    first, again, other = held_steps(1), held_steps(1), held_steps(2)
    assert first == again and first != other
    assert 0 < sum(map(sum, first)) < 450  # faults came and went


def test_each_episode_draws_its_faults_afresh_from_its_seed() -> None:
    sim, robots = world(2)
    with sim:
        task = FleetTask(sim, robots, faults=_stop_plan())
        runs = []
        for seed in (5, 5):
            task.reset(seed=seed)
            runs.append([task.step(np.zeros((2, 2)))[4].held.tolist() for _ in range(80)])
        assert runs[0] == runs[1] and any(map(any, runs[0]))
        assert task.faults is not None and task.faults.records[-1]["time"] < 8.0 + 1e-9


def test_a_scenarios_faults_come_with_the_task() -> None:
    faults = ["faults.robots=[{type: stop, rate_per_hour: 2000, duration: 2}]",
              "robots[0].start.random=4"]  # fmt: skip
    with FleetTask.from_scenario("warehouse", faults) as task:
        assert task.faults is not None
        task.reset(seed=0)
        held = [task.step(np.zeros((4, 2)))[4].held.any() for _ in range(100)]
        assert any(held)


def test_the_picture_from_above() -> None:
    sim, robots = world(2)
    with sim:
        stop_r1 = RobotFaults("stop", at=(("r1", 0.0),), duration=(5.0, 5.0))
        task = FleetTask(sim, robots, faults=FaultPlan(robots=(stop_r1,)))
        task.reset(seed=1)
        task.step(np.zeros((2, 2)))
        image = task.render(width=320)
        assert image.dtype == np.uint8 and image.shape[1] == 320 and image.shape[2] == 3
        view = task._view
        assert view is not None
        for k, robot in enumerate(robots):
            rows, cols = view.pixels(behind(robot))
            assert image[rows[0], cols[0]].tolist() == list(HELD if k else ROBOT)
            rows, cols = view.pixels(task.goals[k : k + 1])
            assert image[rows[0], cols[0]].tolist() == list(GOAL)
        with pytest.raises(ConfigError, match="16 to 8192"):
            task.render(width=3)


def test_pybullets_own_picture_where_asked() -> None:
    sim, robots = world(2)
    with sim:
        env = FleetParallelEnv(FleetTask(sim, robots), render_mode="pybullet")
        env.reset(seed=0)
        image = env.render()
        assert image is not None and image.shape == (480, 640, 3)
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 3  # a scene, not a blank
        with pytest.raises(ConfigError, match="choose top or pybullet"):
            env.task.render(view="side")  # type: ignore[arg-type]


def test_an_observation_of_ones_own() -> None:
    def nearest_and_goal(task: FleetTask) -> np.ndarray:
        ranges = np.nan_to_num(task.ranges(), nan=9.0, posinf=9.0)
        return np.column_stack((ranges.min(axis=1), task.goal_in_frame())).astype(np.float32)

    sim, robots = world(2)
    with sim:
        task = FleetTask(sim, robots, FleetTaskConfig(beams=12, observation=nearest_and_goal))
        env = FleetParallelEnv(task)
        assert env.observation_space("r0").shape == (3,)
        observations, _ = env.reset(seed=1)
        pose = robots[1].get_pose()
        d = task.goals[1] - np.array(pose.position[:2])
        ahead = math.cos(pose.yaw) * d[0] + math.sin(pose.yaw) * d[1]
        assert observations["r1"][1] == pytest.approx(ahead, abs=1e-4)
        seen = np.nan_to_num(task.lidars[1].ranges, nan=9.0, posinf=9.0).min()
        assert observations["r1"][0] == pytest.approx(float(seen))
        parallel_api_test(env, num_cycles=20)


def test_the_nearest_neighbours_in_the_robots_frame() -> None:
    sim, robots = world(4)
    with sim:
        config = FleetTaskConfig(beams=8, range_max=5.0, neighbours=2)
        task = FleetTask(sim, robots, config)
        task.reset(seed=0)
        z = robots[0].get_pose().z
        places = [(0.0, 0.0, math.pi / 2), (0.0, 1.0, 0.0), (2.0, 0.0, 0.0), (30.0, 0.0, 0.0)]
        for robot, (x, y, yaw) in zip(robots, places, strict=True):
            robot.set_pose(Pose.from_yaw(x, y, z, yaw))
        obs = task.observe()
        assert obs.shape == (4, 8 + 4 + 6)
        # robot 0 faces +y: robot 1 (1 m north) is 1 m ahead, robot 2 (2 m east) 2 m right
        np.testing.assert_allclose(obs[0, 12:], [0.2, 0.0, 1.0, 0.0, -0.4, 1.0], atol=1e-6)
        # robot 3 is 28 m from everyone: no one in range, and no one lists it
        np.testing.assert_array_equal(obs[3, 12:], np.zeros(6))
        assert (np.abs(obs[:3, 12:]) <= 1.0).all()
        env = FleetParallelEnv(task)
        assert env.observation_space("r0").shape == (18,)
    with pytest.raises(ConfigError, match="neighbours must be >= 0"):
        FleetTaskConfig(neighbours=-1)


def test_gymnasiums_vector_api_runs_several_worlds() -> None:
    import gymnasium

    from fleetsim.rl.envs import FleetSingleEnv

    def make() -> FleetSingleEnv:
        config = FleetTaskConfig(beams=8, actions="waypoint", max_steps=20)
        task = FleetTask.from_scenario("warehouse", ["robots[0].start.random=3"], config)
        return FleetSingleEnv(task)

    vector = gymnasium.vector.SyncVectorEnv([make, make])
    try:
        obs, _ = vector.reset(seed=[1, 2])
        assert obs.shape == (2, 12) and not np.array_equal(obs[0], obs[1])
        ends = []
        for _ in range(25):  # through an automatic reset at 20 steps
            obs, rewards, _, truncated, _ = vector.step(np.tile([1.0, 0.0], (2, 1)))
            ends.append(truncated.tolist())
        assert ends.index([True, True]) == 19 and ends.count([True, True]) == 1
        assert rewards.shape == (2,) and np.isfinite(obs).all()
    finally:
        vector.close()
