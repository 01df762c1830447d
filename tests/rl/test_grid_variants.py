"""The grid task's variants: LoRR's turning actions and warehouse stations."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

from fleetsim.errors import ConfigError
from fleetsim.rl import GridConfig, GridFleet, random_map
from fleetsim.rl.envs import GridParallelEnv, GridSingleEnv, turns_toward

TURNS = GridConfig(agents=1, obs_radius=2, actions="turns")
FORWARD, CLOCKWISE, COUNTER, WAIT = 0, 1, 2, 3


def _one_agent(heading: int) -> GridFleet:
    blocked = np.zeros((9, 9), dtype=bool)
    blocked[4, 6] = True  # two cells east of the agent
    fleet = GridFleet(blocked, TURNS)
    fleet.reset(seed=0)
    fleet.positions = np.array([[4, 4]])
    fleet.goals = np.array([[0, 4]])  # north
    fleet.headings = np.array([heading])
    return fleet


@pytest.mark.parametrize("heading", [0, 1, 2, 3])
def test_the_window_is_turned_so_the_agent_faces_up(heading: int) -> None:
    obs = _one_agent(heading).observe()[0]
    # the obstacle east (two cells) and the goal north, as the agent facing `heading` sees them
    ahead_of = {0: (0, 2), 1: (2, 0), 2: (4, 2), 3: (2, 4)}  # east seen from each heading
    assert np.argwhere(obs[0] == 1).tolist() == [list(ahead_of[heading])]
    goal_at = {0: (2, 0), 1: (4, 2), 2: (2, 4), 3: (0, 2)}  # north seen from each heading
    assert np.argwhere(obs[2] == 1).tolist() == [list(goal_at[heading])]
    assert obs[1, 2, 2] == 1.0  # itself at the centre


def test_turns_and_forward_moves_as_lorr() -> None:
    fleet = _one_agent(0)
    fleet.step(np.array([FORWARD]))
    assert fleet.positions.tolist() == [[4, 5]]  # east
    _, _, _, _, state = fleet.step(np.array([FORWARD]))
    assert fleet.positions.tolist() == [[4, 5]] and state.stopped[0]  # the obstacle
    fleet.step(np.array([CLOCKWISE]))
    assert fleet.headings.tolist() == [1] and fleet.positions.tolist() == [[4, 5]]
    fleet.step(np.array([FORWARD]))
    assert fleet.positions.tolist() == [[5, 5]]  # south
    for _ in range(2):
        fleet.step(np.array([COUNTER]))
    _, _, _, _, state = fleet.step(np.array([WAIT]))
    assert state.headings is not None and state.headings.tolist() == [3]  # north
    assert not state.moved[0] and not state.stopped[0]
    with pytest.raises(ConfigError, match="0 forward, 1 turn clockwise"):
        fleet.step(np.array([4]))


def test_turning_agents_keep_mapf_rules() -> None:
    fleet = GridFleet(random_map(16, 0.2, seed=3), GridConfig(agents=40, actions="turns"))
    fleet.reset(seed=1)
    rng = np.random.default_rng(2)
    for _ in range(400):
        before = fleet.positions
        fleet.step(rng.integers(0, 4, size=40))
        after = fleet.positions
        assert len({tuple(p) for p in after.tolist()}) == 40
        moved = np.abs(after - before).sum(1)
        assert moved.max() <= 1
        pairs = {(tuple(a), tuple(b)) for a, b in zip(before.tolist(), after.tolist(), strict=True)}
        assert not any((b, a) in pairs for a, b in pairs if a != b)  # no swaps


def test_scripted_turns_bring_an_agent_to_its_goal() -> None:
    fleet = GridFleet(np.zeros((12, 12), dtype=bool), GridConfig(agents=1, actions="turns"))
    fleet.reset(seed=5)
    fleet.positions, fleet.goals = np.array([[10, 1]]), np.array([[2, 9]])
    steps = 0
    for steps in range(1, 41):  # noqa: B007 (the count is asserted)
        gap = fleet.goals - fleet.positions
        move = 1 if gap[0, 0] < 0 else 4  # up first, then right
        if gap[0, 0] == 0:
            move = 4
        _, rewards, *_ = fleet.step(turns_toward(fleet.headings, np.array([move])))
        if rewards[0]:
            break
    assert rewards[0] == 1.0 and 16 <= steps <= 19  # 16 moves and up to three turns


def test_turning_environments_pass_the_api_checks() -> None:
    config = GridConfig(agents=6, max_steps=40, actions="turns")
    env = GridParallelEnv(random_map(16, 0.2, seed=7), config)
    assert env.action_space("agent_0").n == 4
    parallel_api_test(env, num_cycles=60)
    single = GridSingleEnv(random_map(16, 0.2, seed=7), config)
    check_env(single, skip_render_check=True)
    single.reset(seed=0)
    assert single.scripted().max() <= 3


def test_stations_give_orders_pick_up_then_drop_off() -> None:
    blocked = np.zeros((10, 10), dtype=bool)
    pickups, dropoffs = np.array([[0, 0], [0, 9]]), np.array([[9, 0], [9, 9]])
    fleet = GridFleet(blocked, GridConfig(agents=3), stations=(pickups, dropoffs))
    fleet.reset(seed=0)
    assert {tuple(g) for g in fleet.goals.tolist()} <= {(0, 0), (0, 9)}
    fleet.positions = np.array([[0, 1], [5, 5], [8, 9]])
    fleet.goals = np.array([[0, 0], [0, 9], [9, 9]])
    fleet.carrying = np.array([False, False, True])
    assert fleet.render(scale=1)[9, 0].tolist() == [150, 70, 190]  # a drop-off drawn
    _, rewards, _, _, state = fleet.step(np.array([3, 0, 2]))  # left, wait, down
    assert rewards.tolist() == [1.0, 0.0, 1.0]
    assert state.delivered is not None and state.delivered.tolist() == [False, False, True]
    assert fleet.carrying.tolist() == [True, False, False]
    assert tuple(fleet.goals[0]) in {(9, 0), (9, 9)}  # a drop-off next
    assert tuple(fleet.goals[2]) in {(0, 0), (0, 9)}  # a pick-up next


def test_one_shot_orders_finish_at_the_drop_off() -> None:
    stations = (np.array([[0, 0]]), np.array([[0, 3]]))
    config = GridConfig(agents=1, lifelong=False)
    fleet = GridFleet(np.zeros((4, 4), dtype=bool), config, stations=stations)
    fleet.reset(seed=0)
    fleet.positions = np.array([[0, 1]])
    _, _, terminated, _, _ = fleet.step(np.array([3]))  # onto the pick-up
    assert not terminated[0] and fleet.goals.tolist() == [[0, 3]]
    for _ in range(2):
        fleet.step(np.array([4]))
    _, _, terminated, _, state = fleet.step(np.array([4]))
    assert state.delivered is not None and state.delivered[0] and terminated[0]
    assert not fleet.active[0]


def test_a_station_in_a_wall_is_refused() -> None:
    blocked = np.zeros((5, 5), dtype=bool)
    blocked[2, 2] = True
    with pytest.raises(ConfigError, match=r"pick-up cell \(row 2, column 2\)"):
        GridFleet(blocked, GridConfig(agents=2), stations=(np.array([[2, 2]]), np.array([[0, 0]])))
    with pytest.raises(ConfigError, match="drop-off cell"):
        GridFleet(blocked, GridConfig(agents=2), stations=(np.array([[0, 0]]), np.array([[7, 0]])))
    with pytest.raises(ConfigError, match="actions 'spin'"):
        GridConfig(actions="spin")  # type: ignore[arg-type]


def _held_steps(fleet: GridFleet, seed: int) -> list[list[bool]]:
    """Who a delay held at each of 100 steps of random actions (checking they stood still)."""
    fleet.reset(seed=seed)
    rng, out, n = np.random.default_rng(0), [], fleet.config.agents
    for _ in range(100):
        before, facing = fleet.positions, fleet.headings.copy()
        _, _, _, _, state = fleet.step(rng.integers(1, fleet.config.n_actions, size=n))
        assert state.held is not None
        held = state.held
        assert (fleet.positions[held] == before[held]).all()
        assert (fleet.headings[held] == facing[held]).all()
        assert not state.stopped[held].any()  # (a delay is not a blocked move)
        out.append(held.tolist())
    return out


@pytest.mark.parametrize("actions", ["moves", "turns"])
def test_delays_hold_agents_whatever_they_are_told_and_repeat_by_seed(actions: str) -> None:
    from fleetsim.faults import DelayConfig

    delays = DelayConfig(p=0.05, min_delay=2, max_delay=6)
    config = GridConfig(agents=30, actions=actions, delays=delays)  # type: ignore[arg-type]
    fleet = GridFleet(random_map(16, 0.1, seed=1), config)
    first = _held_steps(fleet, 4)
    assert first == _held_steps(fleet, 4) and first != _held_steps(fleet, 5)
    assert 30 < sum(map(sum, first)) < 3000 * 0.6


def goal_and_walls(fleet: GridFleet) -> np.ndarray:
    """An observation of one's own: the goal's offset, then the four neighbours' walls."""
    windows = fleet.windows()
    r = fleet.config.obs_radius
    near = windows[:, 0, [r - 1, r + 1, r, r], [r, r, r - 1, r + 1]]
    return np.column_stack((fleet.goals - fleet.positions, near)).astype(np.float32)


def test_an_observation_of_ones_own() -> None:
    config = GridConfig(agents=6, max_steps=30, observation=goal_and_walls)
    env = GridParallelEnv(random_map(16, 0.2, seed=7), config)
    assert env.observation_space("agent_0").shape == (6,)
    observations, _ = env.reset(seed=2)
    fleet = env.fleet
    np.testing.assert_array_equal(observations["agent_3"][:2], fleet.goals[3] - fleet.positions[3])
    parallel_api_test(env, num_cycles=30)
    check_env(GridSingleEnv(random_map(16, 0.2, seed=7), config), skip_render_check=True)
    ints = GridConfig(agents=6, observation=lambda f: f.positions)
    with pytest.raises(ConfigError, match="floating-point"):
        GridParallelEnv(random_map(16, 0.2, seed=7), ints)


def test_the_wrappers_take_stations() -> None:
    blocked = np.zeros((10, 10), dtype=bool)
    stations = (np.array([[0, 0], [0, 9]]), np.array([[9, 0], [9, 9]]))
    env = GridParallelEnv(blocked, GridConfig(agents=4, max_steps=30), stations=stations)
    env.reset(seed=0)
    assert {tuple(g) for g in env.fleet.goals.tolist()} <= {(0, 0), (0, 9)}
    parallel_api_test(env, num_cycles=30)
    single = GridSingleEnv(blocked, GridConfig(agents=4), stations=stations)
    single.reset(seed=1)
    assert {tuple(g) for g in single.fleet.goals.tolist()} <= {(0, 0), (0, 9)}
