"""The crowd model's parts: walls found as brute force finds them, moves that would cross a
wall not made, people who give robots a berth and never overlap them, routes, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.people import Crowd, Obstacles, SpeedModel, Walls, box_sides, step_people
from fleetsim.people.walls import closest_on_segments


def test_walls_near_points_are_those_brute_force_finds() -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(-20, 20, (300, 2))
    segments = np.stack((a, a + rng.uniform(-6, 6, (300, 2))), axis=1)
    walls = Walls(segments, reach=1.5, cell=1.0)
    points = rng.uniform(-22, 22, (500, 2))
    who, seg, closest, dist = walls.near(points)
    # brute force over the walls' pieces (each wall cut into pieces no longer than a cell)
    pieces = walls.segments
    p = np.repeat(points, len(pieces), axis=0)
    s = np.tile(pieces, (len(points), 1, 1))
    d = np.hypot(*(closest_on_segments(p, s) - p).T).reshape(len(points), len(pieces))
    want = {(int(i), int(k)) for i, k in zip(*np.nonzero(d <= 1.5), strict=True)}
    assert {(int(i), int(k)) for i, k in zip(who, seg, strict=True)} == want
    np.testing.assert_allclose(dist, d[who, seg])
    assert np.allclose(np.hypot(*(closest - points[who]).T), dist)


def test_a_box_has_four_sides_and_blocks_the_way() -> None:
    sides = box_sides(np.array([[0.0, 0.0, 0.5]]), np.array([[1.0, 0.5, 0.5]]), np.array([0.0]))
    assert sides.shape == (4, 2, 2)
    assert {tuple(np.round(p, 9)) for p in sides[:, 0]} == {(1, 0.5), (-1, 0.5), (-1, -0.5),
                                                              (1, -0.5)}  # fmt: skip
    walls = Walls(sides)
    start, end = np.array([[-2.0, 0.0], [-2.0, 2.0]]), np.array([[2.0, 0.0], [2.0, 2.0]])
    assert walls.crossed(start, end).tolist() == [True, False]
    assert walls.blocked(start, end).tolist() == [True, False]


def test_a_crowd_pressed_against_a_thin_wall_never_crosses_or_touches_it() -> None:
    walls = Walls(np.array([[[5.0, -10.0], [5.0, 10.0]]]))  # a wall of no thickness
    rng = np.random.default_rng(1)
    x = np.column_stack((rng.uniform(0, 4.6, 80), rng.uniform(-4, 4, 80)))
    x = x[np.argsort(x[:, 0])][::2]  # (40 of them, spread)
    n = len(x)
    model = SpeedModel()
    for _ in range(300):  # everyone walks east, into the wall
        x = step_people(x, np.full(n, 0.2), np.full(n, 1.8), x + np.array([50.0, 0.0]), 0.1, model,
                        walls).positions  # fmt: skip
        assert (x[:, 0] <= 5.0 - 0.2 + 1e-9).all()


def test_people_give_a_robot_a_berth_and_never_overlap_it() -> None:
    model = SpeedModel()
    x = np.array([[0.0, 0.05], [0.0, -0.6]])
    robot = Obstacles(np.array([[3.0, 0.0]]), np.array([0.4]), np.array([[-0.5, 0.0]]))
    closest = np.inf
    for _ in range(100):
        robot.centres = robot.centres + robot.velocities * 0.1  # the robot drives at them
        ahead = x + np.array([20.0, 0.0])
        result = step_people(x, np.full(2, 0.2), np.full(2, 1.3), ahead, 0.1, model, robots=robot)
        x = result.positions
        gap = np.hypot(*(x - robot.centres).T) - 0.6
        closest = min(closest, float(gap.min()))
        assert (gap >= -1e-9).all()
        _, _, gaps = result.robot_pairs
        assert len(gaps) == 0 or gaps.min() >= -1e-9
    assert (x[:, 0] > 6.0).all()  # past it
    assert closest < 1.0  # (it came near: the test is not empty)


def test_routes_are_walked_in_order_and_done_people_stand() -> None:
    crowd = Crowd(seed=0)
    ids = crowd.add(np.array([[0.0, 0.0], [10.0, 0.0]]),
                    [np.array([[3.0, 0.0], [3.0, 3.0]]), np.array([[10.0, 2.0]])],
                    speeds=np.array([1.0, 1.0]))  # fmt: skip
    done: list[int] = []
    passed_corner = False
    for _ in range(100):
        crowd.step(0.1)
        done += crowd.done.tolist()
        passed_corner |= bool(np.hypot(*(crowd.x[0] - [3.0, 0.0])) < 0.9)
    assert sorted(done) == ids.tolist() and passed_corner
    np.testing.assert_allclose(crowd.x[1], [10.0, 2.0], atol=0.31)
    assert np.allclose(crowd.v, 0.0)  # (at their ends they stand)
    crowd.remove(ids[:1])
    assert crowd.ids.tolist() == [ids[1]]


def test_bad_input_is_refused_clearly() -> None:
    crowd = Crowd()
    with pytest.raises(ConfigError, match="2 people need 2 routes"):
        crowd.add(np.zeros((2, 2)), [np.ones((1, 2))])
    with pytest.raises(ConfigError, match="one or more finite waypoints"):
        crowd.add(np.zeros((1, 2)), [np.empty((0, 2))])
    with pytest.raises(ConfigError, match="speeds and radii > 0"):
        crowd.add(np.zeros((1, 2)), [np.ones((1, 2))], speeds=np.array([0.0]))
    with pytest.raises(ConfigError, match=r"positions must be \(x, y\) points, shape \(n, 2\), "
                                          r"got \(2, 3\)"):  # fmt: skip
        crowd.add(np.zeros((2, 3)), [np.ones((1, 2))] * 2)
    with pytest.raises(ConfigError, match=r"each route must be \(x, y\) points.*got \(3,\)"):
        crowd.add(np.zeros((1, 2)), [np.ones(3)])
    with pytest.raises(ConfigError, match=r"radius is one number or 2, offset \(2,\) or \(2, 2\)"):
        crowd.add(np.zeros((2, 2)), [np.ones((1, 2))] * 2, radius=np.full(3, 0.2))
    with pytest.raises(ConfigError, match="time_gap must be a number > 0"):
        SpeedModel(time_gap=0)
    with pytest.raises(ConfigError, match="finite"):
        Walls(np.array([[[0.0, 0.0], [np.nan, 1.0]]]))
    assert len(crowd) == 0


@pytest.mark.parametrize("spread", [3.0, 40.0, 400.0])
def test_pairs_within_a_reach_are_those_brute_force_finds(spread: float) -> None:
    from fleetsim.people.grid import pairs_within

    x = np.random.default_rng(int(spread)).uniform(-spread, spread, (600, 2))
    x[:50] = x[50:100]  # (some on the same spot)
    i, j = pairs_within(x, 1.5)
    got = {(min(a, b), max(a, b)) for a, b in zip(i.tolist(), j.tolist(), strict=True)}
    assert len(got) == len(i)  # each pair once
    d = np.hypot(*(x[:, None, :] - x[None, :, :]).transpose(2, 0, 1))
    want = {(a, b) for a, b in zip(*np.nonzero(np.triu(d <= 1.5, 1)), strict=True)}
    assert got == {(int(a), int(b)) for a, b in want}


def test_routes_of_people_gone_are_let_go_and_the_others_walk_on() -> None:
    crowd = Crowd(seed=0)
    rng = np.random.default_rng(0)
    routes = [rng.uniform(0, 50, (400, 2)) for _ in range(10)]
    ids = crowd.add(rng.uniform(0, 50, (10, 2)), routes)
    crowd.step(0.1)
    kept = ids[-2:]
    want = [routes[8][crowd.leg[8] - crowd.first[8] :], routes[9][crowd.leg[9] - crowd.first[9] :]]
    crowd.remove(ids[:8])
    assert len(crowd.points) == 800  # (compacted: the two routes left)
    assert crowd.ids.tolist() == kept.tolist()
    for k in range(2):
        np.testing.assert_array_equal(crowd.points[crowd.leg[k] : crowd.last[k] + 1], want[k])


@pytest.mark.parametrize("compiled", [False, None])
def test_people_give_a_robot_they_see_coming_a_wider_berth(compiled: bool | None) -> None:
    """A person crossing a robot's line as the robot comes: seeing where the robot will be
    (anticipation 1 s), it keeps farther from it than reacting to where it is; never touched."""

    def closest(anticipation: float) -> float:
        model = SpeedModel(anticipation=anticipation)
        x, gap = np.array([[0.0, 3.5]]), np.inf  # (on course to meet it at y = 0)
        for k in range(100):
            robot = Obstacles(
                np.array([[-6.0 + 0.15 * k, 0.0]]), np.array([0.4]), np.array([[1.5, 0.0]])
            )  # (1.5 m/s along y = 0)
            x = step_people(x, np.full(1, 0.2), np.full(1, 1.0), np.array([[0.0, -4.0]]), 0.1,
                            model, robots=robot, compiled=compiled).positions  # fmt: skip
            gap = min(gap, float(np.hypot(*(x[0] - robot.centres[0]))) - 0.6)
        return gap

    seen, blind = closest(1.0), closest(0.0)
    assert seen > blind + 0.3 and blind > -1e-9, (seen, blind)  # (measured: 0.59, 0.03 m)
