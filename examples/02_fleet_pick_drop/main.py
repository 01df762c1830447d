"""100 mobile robots shuttling crates between two banks of rack slots, with Pick and Drop.

Every robot has its own lane with a slot at each end: a pair of low rails that a crate rests on
(the site is a scenario file, `scene.yaml`). The robot drives in between, under the crate,
lifts it, and carries it to the other end and back, forever. The next trip is queued when a
Drop completes (an event), so nothing polls. The geometry leaves room for everything, so the
collision counts printed at the end are all 0. Run:
    python examples/02_fleet_pick_drop/main.py              # headless, 120 simulated seconds
    python examples/02_fleet_pick_drop/main.py --steps 300  # a fixed number of steps
    python examples/02_fleet_pick_drop/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fleetsim import Agent, Drop, Pick, Pose
from fleetsim.scenario import build, load_scenario

HERE = Path(__file__).parent
CARRY = Pose.from_xyz(0, 0, 0.43)  # a crate on a robot: lifted 2 cm off the rails
ACROSS = np.array([40.0, 0.0, 0.0])  # from a left slot to the right one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    run = build(load_scenario(HERE / "scene.yaml"), gui=args.gui)
    with run.sim as sim:
        robots = run.scene.robots
        crates = [run.scene.object(f"crate_{i}") for i in range(len(robots))]
        slots = {r.handle: (c, c.get_pose().position) for r, c in zip(robots, crates, strict=True)}
        delivered = [0]

        def send(robot: Agent) -> None:
            crate, left = slots[robot.handle]
            on_left = np.allclose(crate.get_pose().position, left)
            to = left + ACROSS if on_left else left
            robot.add_action_sequence(
                [Pick(crate.object_id, attach_relative_pose=CARRY), Drop(Pose(to))]
            )

        def on_done(robot: Agent, action: object) -> None:
            if isinstance(action, Drop):
                delivered[0] += 1
                send(robot)

        sim.on("action_completed", on_done)
        for robot in robots:
            send(robot)

        sim.run_simulation(None if args.steps is None else args.steps * sim.params.timestep)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        print(f"boxes delivered: {delivered[0]}")
        print(f"actions completed {sim.actions.completed_count}, failed {sim.actions.failed_count}")
        kinds = ", ".join(f"{k} {n}" for k, n in sim.collision_counts.items())
        print(f"collisions: {sim.collision_count} ({kinds})")
        stats = sim.get_profiling_stats()
        print(f"mean step time {stats['total']:.3f} ms for {len(robots)} robots")


if __name__ == "__main__":
    main()
