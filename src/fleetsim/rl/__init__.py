"""Reinforcement learning: fleets as learning environments. `GridFleet` (the array API: every
agent's observations, rewards and terminations as one array each) on a grid map, with POGEMA's
moves or LoRR's turns and optional warehouse stations, under PettingZoo's Parallel API
(`GridParallelEnv`) and Gymnasium's (`GridSingleEnv`); `continuous.FleetTask`, a simulation's
robots on its site with their real kinematics, lidars and faults, velocity or waypoint
actions, under PettingZoo's (`FleetParallelEnv`) and Gymnasium's (`FleetSingleEnv`);
`evaluate.evaluate`, a policy over seeds as a sweep. The wrappers (`fleetsim.rl.envs`) need
`pip install "fleetsim[rl]"`."""

from fleetsim.rl.grid import GridConfig, GridFleet, GridState, goal_reward, map_file, random_map

__all__ = ["GridConfig", "GridFleet", "GridState", "goal_reward", "map_file", "random_map"]
