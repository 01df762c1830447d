"""A policy learned for the grid task in NumPy: 64 robots on a 32 x 32 map, lifelong goals,
one policy for all (the cross-entropy method over five weights of a softmax over the moves,
each move scored by what POGEMA's observation shows: is the cell free, is a robot there, does
it bring the goal nearer). `--plot` draws the reward rising. No deep-learning framework.
    python examples/15_learning/main.py --plot learning.png   # 60,000 grid steps of training
    python examples/15_learning/main.py --steps 2000
"""

from __future__ import annotations

import argparse

import numpy as np

from fleetsim.rl import GridConfig, GridFleet, random_map

EPISODE = 100  # grid steps an episode (a step is one simulated second, as LoRR counts)
CENTRE, NEAR = 5, [(5, 5), (4, 5), (6, 5), (5, 4), (5, 6)]  # (the cells of wait, up, down, ...)


def features(obs: np.ndarray) -> np.ndarray:
    """(robots, 5 moves, 5): wait, blocked, crowded, nearer the goal, farther."""
    n, goal = len(obs), np.argwhere(obs[:, 2] > 0)  # (each goal mark: robot, row, column)
    where, out = np.zeros((n, 2)), np.zeros((n, 5, 5))
    where[goal[:, 0]] = goal[:, 1:] - CENTRE
    for k, (r, c) in enumerate(NEAR):
        gain = np.abs(where).sum(1) - np.abs(where - [r - CENTRE, c - CENTRE]).sum(1)
        out[:, k] = np.stack([np.full(n, k == 0), obs[:, 0, r, c], obs[:, 1, r, c] * (k > 0),
                              gain > 0, gain < 0], axis=1)  # fmt: skip
    return out


def episode(fleet: GridFleet, weights: np.ndarray, seed: int, length: int = EPISODE) -> float:
    """Goals per robot per EPISODE steps over `length` steps, each taking the softmax's pick."""
    rng = np.random.default_rng(seed)
    obs, total = fleet.reset(seed=seed), 0.0
    for _ in range(length):
        p = np.exp(features(obs) @ weights)
        p /= p.sum(1, keepdims=True)
        actions = (p.cumsum(1) > rng.random((len(p), 1))).argmax(1)
        obs, rewards, *_ = fleet.step(actions)
        total += float(rewards.sum())
    return total / fleet.config.agents * EPISODE / length


def plot(history: list[float], path: str) -> None:  # (matplotlib: the `[viz]` extra)
    import matplotlib.pyplot as plt

    plt.plot(history), plt.xlabel("generation"), plt.ylabel("goals per robot per episode")
    plt.savefig(path, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--plot", help="draw the learning curve into this PNG file")
    args = parser.parse_args()
    fleet = GridFleet(random_map(32, 0.2, seed=0), GridConfig(agents=64, max_steps=EPISODE))
    mean, spread, population, history, done = np.zeros(5), np.full(5, 3.0), 12, [], 0
    random_score = np.mean([episode(fleet, np.zeros(5), seed) for seed in range(3)])
    while done < args.steps:  # (each generation: `population` episodes; the last ones shorter)
        length = min(EPISODE, max(1, (args.steps - done) // population))
        count = min(population, (args.steps - done) // length)
        rng = np.random.default_rng(len(history))
        candidates = mean + spread * rng.standard_normal((count, 5))
        scores = np.array([episode(fleet, w, 1000 + len(history), length) for w in candidates])
        elite = candidates[np.argsort(scores)[-3:]]
        mean, spread, done = elite.mean(0), elite.std(0) + 0.1, done + count * length
        history.append(float(scores.mean()))
        print(f"generation {len(history):>3}: {history[-1]:.2f} goals per robot per episode")
    learned = np.mean([episode(fleet, mean, seed) for seed in range(3)])
    print(f"random moves: {random_score:.2f}, learned: {learned:.2f} goals per robot per episode")
    print(f"weights (wait, blocked, crowded, nearer, farther): {np.round(mean, 1).tolist()}")
    if args.plot:
        plot(history, args.plot)
    print(f"simulated {float(done):.2f} s in {done} steps")


if __name__ == "__main__":
    main()
