"""Motion properties over sampled trajectories, on the real MotionSystem and body table."""

import math

import numpy as np
import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from fleetsim.control import MotionSystem
from fleetsim.geometry import quat
from fleetsim.state import BodyTable, MotionMode

EPS = 1e-9


def make(
    n: int, mode: MotionMode, limits: tuple[float, float, float, float]
) -> tuple[MotionSystem, list[int]]:
    bodies = BodyTable()
    system = MotionSystem(bodies)
    handles = [system.add(int(h), mode, limits) for h in bodies.add(n)]
    return system, handles


def run(
    system: MotionSystem, dt: float, steps: int
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, float]]]:
    """Positions (steps+1, N, 3), yaws (steps+1, N), arrivals [(handle, time)]."""
    b = system.bodies
    pos, yaw, arrivals = [b["pos"].copy()], [quat.yaw_of(b["quat"])], []
    for k in range(steps):
        for h in system.step(dt, k * dt):
            arrivals.append((int(h), (k + 1) * dt))
        pos.append(b["pos"].copy())
        yaw.append(quat.yaw_of(b["quat"]))
    return np.array(pos), np.array(yaw), arrivals


coord = st.floats(-20, 20)
limit = st.floats(0.2, 3.0)


@settings(max_examples=40, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@example(  # settled within ulps of the goal with tolerance 0: must still count as arrived
    MotionMode.DIFFERENTIAL,
    (2.769387723717251, 0.7, 1.3494078207642415, 1.7511988627434893),
    0.01,
    [
        (10.0, -1.6e-198, 1.0556859512776064),
        (-15.306731988547078, -13.857759951488617, 3e-50),
        (12.480066683369209, 8.9e-134, 0.0),
    ],
)
@given(
    st.sampled_from([MotionMode.OMNIDIRECTIONAL, MotionMode.DIFFERENTIAL]),
    st.tuples(limit, limit, limit, limit),
    st.sampled_from([0.01, 0.05, 0.1]),
    st.lists(st.tuples(coord, coord, st.floats(-math.pi, math.pi)), min_size=1, max_size=3),
)
def test_limits_hold_and_goals_are_reached(
    mode: MotionMode, limits: tuple[float, ...], dt: float, goals: list[tuple[float, float, float]]
) -> None:
    max_v, max_a, max_w, max_alpha = limits
    system, (h,) = make(1, mode, limits)  # type: ignore[arg-type]
    pos_all, yaw_all = [], []
    for x, y, yaw in goals:  # each goal is set mid-motion of the previous one
        system.set_goal(h, np.array([x, y, 0.0]), yaw, True, 0.0)
        pos, yaws, _ = run(system, dt, 60)
        pos_all.append(pos[1:, 0])
        yaw_all.append(yaws[1:, 0])
    pos, yaws = [], []
    for _ in range(int(600 / dt / 50)):  # let the last goal finish (up to 600 s)
        p, y, _ = run(system, dt, 50)
        pos.append(p[1:])
        yaws.append(y[1:])
        if not system.is_moving(h):
            break
    pos, yaws = (
        np.concatenate([pos_all[-1][-1:, None], *pos]),
        np.concatenate([yaw_all[-1][-1:, None], *yaws]),
    )
    assert system.is_arrived(h) and not system.is_moving(h)
    np.testing.assert_allclose(pos[-1, 0, :2], goals[-1][:2], atol=1e-9)
    assert abs(quat.wrap_angle(yaws[-1, 0] - goals[-1][2])) < 1e-6
    traj = np.concatenate([*pos_all, pos[1:, 0]])
    heading = np.concatenate([*yaw_all, yaws[1:, 0]])
    vel = np.diff(traj, axis=0) / dt
    rate = quat.wrap_angle(np.diff(heading)) / dt
    assert np.all(np.linalg.norm(vel, axis=1) <= max_v * (1 + 1e-9) + EPS)
    assert np.all(np.linalg.norm(np.diff(vel, axis=0), axis=1) <= max_a * dt * (1 + 1e-6) + EPS)
    assert np.all(np.abs(rate) <= max_w * (1 + 1e-9) + 1e-7)
    assert np.all(np.abs(np.diff(rate)) <= max_alpha * dt * (1 + 1e-6) + 1e-7)
    if mode is MotionMode.DIFFERENTIAL:
        forward = np.column_stack((np.cos(heading[1:]), np.sin(heading[1:])))
        lateral = vel[:, 0] * forward[:, 1] - vel[:, 1] * forward[:, 0]
        assert np.all(np.abs(lateral) <= 1e-7), "moved sideways"
        moving = np.linalg.norm(vel, axis=1) > 0
        assert not np.any(moving & (np.abs(rate) > 1e-7)), "turned while driving"


@pytest.mark.parametrize("distance", [0.3, 2.0, 10.0])
@pytest.mark.parametrize("dt", [0.01, 0.1])
def test_arrival_time_matches_the_trapezoid(distance: float, dt: float) -> None:
    v, a = 1.5, 0.8
    system, (h,) = make(1, MotionMode.OMNIDIRECTIONAL, (v, a, 1.0, 1.0))
    system.set_goal(h, np.array([distance, 0.0, 0.0]), 0.0, False, 0.0)
    _, _, arrivals = run(system, dt, int(40 / dt))
    expected = distance / v + v / a if distance >= v * v / a else 2 * math.sqrt(distance / a)
    assert abs(arrivals[0][1] - expected) <= dt + 1e-9


def test_every_path_waypoint_is_visited() -> None:
    for mode in MotionMode:
        system, (h,) = make(1, mode, (1.0, 1.0, 2.0, 4.0))
        waypoints = np.array([[2.0, 0, 0], [2.0, 2.0, 0], [-1.0, 3.0, 0], [0.0, 0.0, 0]])
        system.set_path(h, waypoints, np.zeros(4), False, 0.0)
        pos, _, arrivals = run(system, 0.05, 1000)
        after = 1  # each waypoint is hit exactly, after the previous one
        for w in waypoints:
            hits = np.flatnonzero(np.linalg.norm(pos[after:, 0] - w, axis=1) < 1e-9)
            assert hits.size, f"{mode.name} never reached {w} after step {after}"
            after += int(hits[0]) + 1
        assert len(arrivals) == 1  # only the end of the path is an arrival


def test_velocity_command_with_timeout() -> None:
    system, (omni, diff) = make(2, MotionMode.OMNIDIRECTIONAL, (1.0, 2.0, 1.0, 4.0))
    system.agents["mode"][system.agents.row(diff)] = int(MotionMode.DIFFERENTIAL)
    system.set_velocity(omni, 0.5, 0.5, 0.0, until=2.0)  # sideways allowed
    system.set_velocity(diff, 0.5, 0.0, 0.5, until=2.0)
    pos, yaw, _ = run(system, 0.01, 400)
    vel = np.diff(pos, axis=0) / 0.01
    np.testing.assert_allclose(vel[150, 0], (0.5, 0.5, 0.0), atol=1e-9)
    assert np.linalg.norm(vel[150, 1]) == pytest.approx(0.5)
    assert np.all(np.linalg.norm(vel[-50:], axis=2) == 0)  # stopped after the timeout
    assert not system.is_moving(omni) and not system.is_moving(diff)
    assert yaw[-1, 1] == pytest.approx(0.5 * 2.0, abs=0.01)


def test_many_agents_in_one_step_match_one_at_a_time() -> None:
    rng = np.random.default_rng(3)
    goals = rng.uniform(-10, 10, size=(50, 3)) * [1, 1, 0]
    together, hs = make(50, MotionMode.DIFFERENTIAL, (1.0, 1.0, 1.0, 2.0))
    for h, g in zip(hs, goals, strict=True):
        together.set_goal(h, g, 0.0, True, 0.0)
    run(together, 0.1, 300)
    for i in (0, 17, 49):
        alone, (h,) = make(1, MotionMode.DIFFERENTIAL, (1.0, 1.0, 1.0, 2.0))
        alone.set_goal(h, goals[i], 0.0, True, 0.0)
        run(alone, 0.1, 300)
        np.testing.assert_array_equal(alone.bodies["pos"][0], together.bodies["pos"][i])


@pytest.mark.parametrize("mode", [MotionMode.OMNIDIRECTIONAL, MotionMode.DIFFERENTIAL])
def test_arrival_is_reported_on_the_first_step_within_tolerance(mode: MotionMode) -> None:
    """With a tolerance, a goal counts as reached (once) on the first step that ends within
    it, while the robot still drives on to the goal itself; a second robot far from its goal
    in the same steps does not arrive."""
    system, (near, far) = make(2, mode, (1.0, 0.5, 2.0, 2.0))
    system.set_goal(near, np.array([4.0, 0.0, 0.0]), 0.0, False, 1.5)
    system.set_goal(far, np.array([40.0, 0.0, 0.0]), 0.0, False, 0.1)
    pos, _, arrivals = run(system, 0.1, 120)
    within = np.flatnonzero(np.abs(pos[:, 0, 0] - 4.0) <= 1.5)
    assert arrivals[0] == (near, pytest.approx(within[0] * 0.1))
    assert pos[within[0], 0, 0] < 4.0 - 1.0  # reported well before the goal itself
    assert [h for h, _ in arrivals] == [near]  # once, and never the far robot
    assert system.is_moving(far) and not system.is_moving(near)
    assert pos[-1, 0, 0] == pytest.approx(4.0, abs=1e-9)  # it still drove to the goal
