"""Reinforcement learning: fleets as learning environments. `GridFleet` (the array API: every
agent's observations, rewards and terminations as one array each) on a grid map, under
PettingZoo's Parallel API (`GridParallelEnv`) and Gymnasium's (`GridSingleEnv`; the wrappers
need `pip install "fleetsim[rl]"`)."""

from fleetsim.rl.grid import GridConfig, GridFleet, GridState, goal_reward, map_file, random_map

__all__ = ["GridConfig", "GridFleet", "GridState", "goal_reward", "map_file", "random_map"]
