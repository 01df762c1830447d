"""PettingZoo's and Gymnasium's own checks pass on the grid environments."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test, parallel_seed_test

from fleetsim.errors import ConfigError
from fleetsim.rl import GridConfig, random_map
from fleetsim.rl.envs import GridParallelEnv, GridSingleEnv

MAP = random_map(16, 0.2, seed=7)


def test_pettingzoo_parallel_api_and_seed_tests() -> None:
    parallel_api_test(GridParallelEnv(MAP, GridConfig(agents=8, max_steps=40)), num_cycles=100)
    parallel_seed_test(lambda: GridParallelEnv(MAP, GridConfig(agents=8, max_steps=40)))
    one_shot = GridConfig(agents=6, max_steps=60, lifelong=False)
    parallel_api_test(GridParallelEnv(MAP, one_shot), num_cycles=100)


def test_an_action_for_a_name_that_is_not_an_agent_is_refused() -> None:
    """As many actions as agents, one under a name that is not an agent's (a typo): a clear
    error, not the typo's action dropped and its agent's taken as a wait."""
    env = GridParallelEnv(MAP, GridConfig(agents=3, max_steps=40))
    env.reset(seed=0)
    others = env.agents[1:]
    with pytest.raises(ConfigError, match=r"no agent named 'agent_9'; the agents are"):
        env.step({"agent_9": 1, **{a: 0 for a in others}})
    env.step({a: 0 for a in reversed(env.agents)})  # (another order: fine)


def test_agents_finish_and_leave_the_list() -> None:
    env = GridParallelEnv(MAP, GridConfig(agents=4, max_steps=400, lifelong=False))
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    seen = 0
    while env.agents:
        _, rewards, terminated, truncated, _ = env.step(
            {a: int(rng.integers(0, 5)) for a in env.agents}
        )
        seen += sum(terminated.values())
        assert set(rewards) == set(terminated) == set(truncated)
    assert seen + sum(truncated.values()) >= 1


def test_gymnasium_check_env_render_and_vector() -> None:
    env = GridSingleEnv(MAP, GridConfig(agents=8), render_mode="rgb_array")
    check_env(env, skip_render_check=True)
    env.reset(seed=0)
    image = env.render()
    assert image is not None and image.shape == (64, 64, 3) and image.dtype == np.uint8
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: GridSingleEnv(MAP, GridConfig(agents=8)) for _ in range(4)]
    )
    obs, _ = vector.reset(seed=1)
    assert obs.shape == (4, 3, 11, 11)
    obs, rewards, *_ = vector.step(np.zeros(4, dtype=np.int64))
    assert rewards.shape == (4,)
    vector.close()
