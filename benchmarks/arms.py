"""Benchmark: N kinematic arms (bundled arm_robot) running JointAction sequences.

Each arm cycles through three joint configurations, the next queued when one completes. Reports
the median ms per step at a 0.01 s step, with collision checks off and every step.
    python benchmarks/arms.py --sizes 100 --steps 300
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from common import median_step_ms, write_json

from fleetsim import Agent, JointAction, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.bench.worker import ARM_POSES as POSES  # the same targets as `fleetsim bench --arms`

TIMESTEP = 0.01


def run_case(n: int, collisions: bool, steps: int, warmup: int) -> dict[str, Any]:
    params = SimulationParams(
        timestep=TIMESTEP, target_rtf=0, seed=0, collision_check_frequency=None if collisions else 0
    )
    with MultiRobotSimulationCore(params) as sim:
        arms = [
            Agent.from_urdf(
                "arm_robot",
                Pose.from_xyz(2.0 * (i % 10), 2.0 * (i // 10), 0),
                sim_core=sim,
                use_fixed_base=True,
            )
            for i in range(n)
        ]
        completed = [0]

        def again(agent: Agent, action: object) -> None:
            completed[0] += 1
            agent.add_action(JointAction(POSES[completed[0] % len(POSES)]))

        sim.on("action_completed", again)
        for k, arm in enumerate(arms):
            arm.add_action(JointAction(POSES[k % len(POSES)]))
        ms = median_step_ms(sim, steps, warmup)
        return {
            "n": n,
            "collisions": collisions,
            "ms_per_step": ms,
            "rtf": TIMESTEP * 1e3 / ms,
            "joint_actions_done": completed[0],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    results = [run_case(n, c, args.steps, args.warmup) for n in args.sizes for c in (False, True)]
    print(f"{'N':>5} {'collisions':>10} {'ms/step':>8} {'RTF @0.01s':>10} {'actions done':>12}")
    for r in results:
        ms, rtf, done = r["ms_per_step"], r["rtf"], r["joint_actions_done"]
        print(f"{r['n']:>5} {r['collisions']!s:>10} {ms:>8.3f} {rtf:>10.1f} {done:>12}")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
