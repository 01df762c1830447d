"""Paths pass through their waypoints at the speed the turn there allows, within the limits."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose

from ..conftest import make_sim

DT, V, A = 0.1, 2.0, 1.0


@pytest.fixture
def sim() -> MultiRobotSimulationCore:
    with make_sim(timestep=DT, collision_check_frequency=0) as s:
        yield s


Track = tuple[list[np.ndarray], list[np.ndarray], int]


def follow(
    sim: MultiRobotSimulationCore,
    robot: Agent,
    waypoints: list[tuple[float, float]],
    limits: list[float] | None = None,
) -> Track:
    """Drive the path; the positions and velocities of every step, and the step count."""
    poses = [Pose.from_xyz(x, y, 0) for x, y in waypoints]
    robot.set_path(poses, tolerance=0.0, align_orientation=False, speed_limits=limits)
    positions, velocities = [], []
    for step in range(3000):
        sim.step_once()
        positions.append(np.array(robot.get_pose().position[:2]))
        velocities.append(np.array(robot.get_velocity()[0][:2]))
        if not robot.is_moving:
            return positions, velocities, step + 1
    raise AssertionError("the path did not end")


def robot(sim: MultiRobotSimulationCore, mode: str) -> Agent:
    return Agent.from_urdf(
        "simple_cube",
        sim_core=sim,
        motion_mode=mode,
        max_linear_vel=V,
        max_linear_accel=A,
        max_angular_vel=1.0,
    )


def speed_passing_x(positions: list[np.ndarray], velocities: list[np.ndarray], x: float) -> float:
    """Speed of the step that carried the robot across x (a waypoint on a straight line)."""
    k = next(k for k, p in enumerate(positions) if p[0] >= x)
    return float(np.linalg.norm(velocities[k]))


def speed_at(
    positions: list[np.ndarray], velocities: list[np.ndarray], xy: tuple[float, float]
) -> float:
    hits = [k for k, p in enumerate(positions) if np.allclose(p, xy, atol=1e-9)]
    assert hits, f"the robot never stood on {xy}"
    return float(np.linalg.norm(velocities[hits[0]]))


def test_omni_drives_through_waypoints_within_its_limits(sim: MultiRobotSimulationCore) -> None:
    bot = robot(sim, "omnidirectional")
    path = [(5, 0), (10, 0), (15, 2), (15, 10)]  # straight on, a gentle turn, a sharp one
    positions, velocities, _ = follow(sim, bot, path)
    assert positions[-1] == pytest.approx(path[-1], abs=1e-9)  # stops exactly on the end
    assert speed_passing_x(positions, velocities, 5.0) == pytest.approx(V)  # straight on: full
    gentle = math.atan2(2, 5)  # turned in one step: a speed change of 2 v sin(turn / 2)
    limit = A * DT / (2 * math.sin(gentle / 2))
    assert speed_at(positions, velocities, (10, 0)) == pytest.approx(min(V, limit))
    # The sharp turn (68 degrees) is taken from (almost) rest: the last braking step.
    assert speed_at(positions, velocities, (15, 2)) <= A * DT + 1e-9
    speeds = [float(np.linalg.norm(v)) for v in velocities]
    assert max(speeds) <= V + 1e-9
    changes = [float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(velocities)]
    assert max(changes) <= A * DT + 1e-9  # also through the corners


def test_it_is_faster_than_stopping_at_every_waypoint(sim: MultiRobotSimulationCore) -> None:
    dense = [(float(x), 0.0) for x in range(1, 21)]  # 20 waypoints on a straight line
    _, _, through = follow(sim, robot(sim, "omnidirectional"), dense)
    other = robot(sim, "omnidirectional")
    other.set_pose(Pose.from_xyz(0, 5, 0))
    one_goal = follow(sim, other, [(20.0, 5.0)])[2]
    assert through == one_goal  # as if the waypoints were not there


def test_differential_keeps_going_straight_and_stops_to_turn(sim: MultiRobotSimulationCore) -> None:
    bot = robot(sim, "differential")
    positions, velocities, _ = follow(sim, bot, [(5, 0), (10, 0), (10, 5)])
    assert speed_passing_x(positions, velocities, 5.0) == pytest.approx(V)
    # It brakes to the corner (its last braking step is slower than a * dt), then turns in place.
    assert speed_at(positions, velocities, (10, 0)) <= A * DT + 1e-9
    assert positions[-1] == pytest.approx((10, 5), abs=1e-9)


def test_lane_speed_limits(sim: MultiRobotSimulationCore) -> None:
    bot = robot(sim, "omnidirectional")
    positions, velocities, _ = follow(
        sim, bot, [(5, 0), (10, 0), (15, 0)], [math.inf, 0.5, math.inf]
    )
    slow = [
        float(np.linalg.norm(v))
        for p, v in zip(positions, velocities, strict=True)
        if 5.0 + 1e-9 < p[0] < 10.0 - 1e-9
    ]
    assert slow and max(slow) <= 0.5 + 1e-9
    assert max(float(np.linalg.norm(v)) for v in velocities) == pytest.approx(V)


@pytest.mark.parametrize("seed", range(12))
def test_random_paths_keep_the_limits_and_end_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    with make_sim(timestep=DT, collision_check_frequency=0) as sim:
        mode = "omnidirectional" if seed % 2 == 0 else "differential"
        bot = robot(sim, mode)
        path = [tuple(p) for p in np.round(rng.uniform(-8, 8, size=(6, 2)), 2)]
        limits = rng.choice([0.5, 1.0, math.inf], size=6).tolist()
        positions, velocities, _ = follow(sim, bot, path, limits)
        assert positions[-1] == pytest.approx(path[-1], abs=1e-9)
        speeds = [float(np.linalg.norm(v)) for v in velocities]
        assert max(speeds) <= V + 1e-9
        changes = [float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(velocities)]
        assert max(changes) <= A * DT + 1e-9
