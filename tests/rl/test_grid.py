"""The grid task's arrays: MAPF's rules under each collision option, POGEMA's observation
layout, lifelong and one-shot goals, seeds that repeat bit for bit, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.rl import GridConfig, GridFleet, random_map

WAIT, UP, DOWN, LEFT, RIGHT = range(5)


def cells(fleet: GridFleet) -> list[int]:
    return (fleet.positions[:, 0] * fleet.width + fleet.positions[:, 1]).tolist()


@pytest.mark.parametrize("collisions", ["block", "block_both", "priority"])
def test_no_two_agents_share_a_cell_or_swap(collisions: str) -> None:
    fleet = GridFleet(random_map(16, 0.2, seed=3), GridConfig(agents=60, collisions=collisions))  # type: ignore[arg-type]
    fleet.reset(seed=1)
    rng = np.random.default_rng(2)
    for _ in range(300):
        before = fleet.positions.copy()
        fleet.step(rng.integers(0, 5, size=60))
        after = fleet.positions
        assert len(set(cells(fleet))) == 60  # (no vertex conflict)
        assert not fleet.blocked[after[:, 0], after[:, 1]].any()
        assert (np.abs(after - before).sum(axis=1) <= 1).all()
        moved = np.flatnonzero((after != before).any(axis=1))
        where = {tuple(before[k]): k for k in range(60)}
        for k in moved.tolist():  # (no swap: k went where j was, j came where k was)
            j = where.get(tuple(after[k]))
            assert j is None or tuple(after[j]) != tuple(before[k])


def test_vertex_swap_and_following_in_a_corridor() -> None:
    corridor = np.zeros((1, 6), dtype=bool)
    fleet = GridFleet(corridor, GridConfig(agents=3, obs_radius=1))
    fleet.reset(seed=0)
    fleet.positions = np.array([[0, 0], [0, 2], [0, 3]])
    fleet.step(np.array([RIGHT, LEFT, RIGHT]))  # 0 and 1 both want cell 1; 2 moves on
    assert cells(fleet) == [0, 2, 4]
    fleet.step(np.array([RIGHT, RIGHT, LEFT]))  # 1 and 2 both want cell 3: they stay
    assert cells(fleet) == [1, 2, 4]
    fleet.step(np.array([RIGHT, RIGHT, LEFT]))  # again; so 0, moving into 1's cell, stays too
    assert cells(fleet) == [1, 2, 4]
    fleet.step(np.array([WAIT, WAIT, LEFT]))
    fleet.step(np.array([WAIT, RIGHT, LEFT]))  # 1 and 2 would swap: both stay
    assert cells(fleet) == [1, 2, 3]
    fleet.step(np.array([RIGHT, RIGHT, RIGHT]))  # each follows the one ahead
    assert cells(fleet) == [2, 3, 4]
    priority = GridFleet(corridor, GridConfig(agents=2, obs_radius=1, collisions="priority"))
    priority.reset(seed=0)
    priority.positions = np.array([[0, 0], [0, 2]])
    priority.step(np.array([RIGHT, LEFT]))  # the lower index takes the cell
    assert cells(priority) == [1, 2]
    soft = GridFleet(corridor, GridConfig(agents=2, obs_radius=1, collisions="soft"))
    soft.reset(seed=0)
    soft.positions = np.array([[0, 0], [0, 2]])
    soft.step(np.array([RIGHT, LEFT]))
    assert cells(soft) == [1, 1]


def test_observations_in_pogemas_layout() -> None:
    grid = np.zeros((5, 5), dtype=bool)
    grid[0, 2] = True
    fleet = GridFleet(grid, GridConfig(agents=2, obs_radius=1))
    fleet.reset(seed=0)
    fleet.positions = np.array([[1, 2], [2, 2]])
    fleet.goals = np.array([[4, 4], [2, 1]])
    obs = fleet.observe()
    assert obs.shape == (2, 3, 3, 3) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[0, 0], [[0, 1, 0], [0, 0, 0], [0, 0, 0]])  # the wall above
    np.testing.assert_array_equal(obs[0, 1], [[0, 0, 0], [0, 1, 0], [0, 1, 0]])  # itself, 1 below
    np.testing.assert_array_equal(
        obs[0, 2], [[0, 0, 0], [0, 0, 0], [0, 0, 1]]
    )  # goal: far down right
    np.testing.assert_array_equal(
        obs[1, 2], [[0, 0, 0], [1, 0, 0], [0, 0, 0]]
    )  # goal: the left cell
    fleet.positions = np.array([[0, 0], [2, 2]])
    np.testing.assert_array_equal(
        fleet.observe()[0, 0], [[1, 1, 1], [1, 0, 0], [1, 0, 0]]
    )  # (outside)


def test_lifelong_goals_are_renewed_and_scored() -> None:
    fleet = GridFleet(np.zeros((1, 4), dtype=bool), GridConfig(agents=1, obs_radius=1))
    fleet.reset(seed=0)
    fleet.positions, fleet.goals = np.array([[0, 0]]), np.array([[0, 1]])
    _, rewards, terminated, _, state = fleet.step(np.array([RIGHT]))
    assert rewards.tolist() == [1.0] and state.reached.all() and not terminated.any()
    assert fleet.goals.tolist() != [[0, 1]] and fleet.goals[0, 0] == 0  # a new goal, on the map


def test_one_shot_agents_finish_and_leave_the_map() -> None:
    config = GridConfig(agents=2, obs_radius=1, lifelong=False, max_steps=5)
    fleet = GridFleet(np.zeros((1, 4), dtype=bool), config)
    fleet.reset(seed=0)
    fleet.positions, fleet.goals = np.array([[0, 1], [0, 3]]), np.array([[0, 2], [0, 0]])
    _, rewards, terminated, truncated, _ = fleet.step(np.array([RIGHT, WAIT]))
    assert rewards.tolist() == [1.0, 0.0] and terminated.tolist() == [True, False]
    fleet.step(np.array([WAIT, LEFT]))  # agent 1 passes through the finished agent's cell
    assert fleet.positions[1].tolist() == [0, 2] and not fleet.observe()[0].any()
    for _ in range(3):
        _, _, terminated, truncated, _ = fleet.step(np.array([WAIT, WAIT]))
    assert truncated.tolist() == [False, True] and terminated.tolist() == [True, False]


def test_the_same_seed_and_actions_repeat_bit_for_bit() -> None:
    def episode() -> list[bytes]:
        fleet = GridFleet(random_map(32, 0.2, seed=5), GridConfig(agents=40))
        out = [fleet.reset(seed=11).tobytes()]
        rng = np.random.default_rng(4)
        for _ in range(50):
            obs, rewards, *_ = fleet.step(rng.integers(0, 5, size=40))
            out += [obs.tobytes(), rewards.tobytes(), fleet.goals.tobytes()]
        return out

    assert episode() == episode()


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ConfigError, match="largest connected area has"):
        GridFleet(np.ones((4, 4), dtype=bool), GridConfig(agents=2))
    with pytest.raises(ConfigError, match="collisions 'bump'"):
        GridConfig(collisions="bump")  # type: ignore[arg-type]
    fleet = GridFleet(random_map(8, 0.1), GridConfig(agents=3))
    fleet.reset(seed=0)
    with pytest.raises(ConfigError, match="3 integers"):
        fleet.step(np.zeros(2, dtype=int))
    with pytest.raises(ConfigError, match="0 \\(wait\\)"):
        fleet.step(np.array([0, 5, 1]))


def test_what_would_not_fit_in_memory_is_refused_with_the_estimate() -> None:
    """A map, radius or fleet whose arrays would not fit in this machine's memory is refused
    before anything is made (not a bare MemoryError half-way), and so is a map size that is
    not one."""
    with pytest.raises(ConfigError, match=r"obs_radius 100,000 and 4 agents would need about "
                                          r"[\d,.]+ GB of memory; this machine has"):  # fmt: skip
        GridFleet(random_map(16), GridConfig(agents=4, obs_radius=100_000))
    with pytest.raises(ConfigError, match=r"random_map\(1,000,000\) would need about 9,000\.0 GB"):
        random_map(1_000_000)
    with pytest.raises(ConfigError, match="size must be a whole number >= 1, got -5"):
        random_map(-5)


def test_a_movingai_map_file() -> None:
    from pathlib import Path

    from fleetsim.rl import map_file

    path = Path(__file__).parents[2] / "src" / "fleetsim" / "scenarios" / "grid_warehouse.map"
    blocked = map_file(str(path))
    assert blocked.shape == (13, 22) and blocked[0].all()  # (its first row is wall: @)
    fleet = GridFleet(blocked, GridConfig(agents=20))
    assert fleet.reset(seed=0).shape == (20, 3, 11, 11)
    with pytest.raises(ConfigError, match="grid map not found"):
        map_file("no_such.map")
