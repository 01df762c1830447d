"""A learned policy evaluated over seeds as a sweep: one 256-step episode per seed in worker
processes, the learned softmax (main.py's weights) beside random moves, each measure's mean and
95% interval, the episodes in Parquet with `--out`.
    python examples/15_learning/evaluate.py --seeds 20 --out episodes.parquet
    python examples/15_learning/evaluate.py --weights=-1.2,-3,-1.3,1.8,-0.7
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
from main import features  # (this folder's main.py: the learned policy's features)

from fleetsim.rl import GridConfig, GridFleet, random_map
from fleetsim.rl.evaluate import evaluate

LEARNED = "-1.2,-3.0,-1.3,1.8,-0.7"  # what main.py learned (its last line but one)


def softmax_policy(weights: np.ndarray, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The learned policy: a move drawn from the softmax of its features' scores."""
    p = np.exp(features(obs) @ weights)
    p /= p.sum(1, keepdims=True)
    return (p.cumsum(1) > rng.random((len(p), 1))).argmax(1)


def random_moves(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Any of the five actions."""
    return rng.integers(0, 5, size=len(obs))


def make_world(map_seed: int) -> GridFleet:
    """64 robots on a 32 x 32 map (20% obstacles), lifelong goals, 256-step episodes."""
    return GridFleet(random_map(32, 0.2, seed=map_seed), GridConfig(agents=64, max_steps=256))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20, help="episodes (seeds 0, 1, ...)")
    parser.add_argument("--weights", default=LEARNED, help="the softmax's five weights")
    parser.add_argument("--map-seed", type=int, default=1, help="the map (main.py trained on 0)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="write the learned policy's episodes here (Parquet)")
    args = parser.parse_args()
    weights = np.array([float(w) for w in args.weights.split(",")])
    world = functools.partial(make_world, args.map_seed)
    learned = functools.partial(softmax_policy, weights)
    runs = {
        "learned": evaluate(learned, world, range(args.seeds), args.workers, out=args.out),
        "random": evaluate(random_moves, world, range(args.seeds), args.workers),
    }
    for name, result in runs.items():
        for row in result.failed:
            print(f"{name}, seed {row['seed']}: failed: {row['error']}")
        print(f"{name}:\n  " + result.table().replace("\n", "\n  "))
    gain = runs["learned"].estimate("goals_per_agent").mean
    print(f"goals per robot: learned {gain:.2f}, random "
          f"{runs['random'].estimate('goals_per_agent').mean:.2f}")  # fmt: skip
    steps = sum(r["steps"] for result in runs.values() for r in result.rows)
    print(f"simulated {float(steps):.2f} s in {steps} steps")


if __name__ == "__main__":
    main()
