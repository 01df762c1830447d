"""A Panda arm picks four cubes off a table, one by one, and stacks them elsewhere.

The table (the arm, the cubes, the bin) is a scenario file, `scene.yaml`; the work is queued
here. Pick and Drop move the arm by inverse kinematics (ee_target_position); the cube rides in
the gripper (attached to the end-effector link) in between. Run:
    python examples/03_arm_pick_place/main.py              # headless, 20 simulated seconds
    python examples/03_arm_pick_place/main.py --steps 500  # a fixed number of steps
    python examples/03_arm_pick_place/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fleetsim import Drop, Pick, Pose, PoseAction
from fleetsim.scenario import build, load_scenario

HERE = Path(__file__).parent
HALF = 0.025  # cube half size, m
STACK = (0.35, -0.35)  # where the stack goes (x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    run = build(load_scenario(HERE / "scene.yaml"), gui=args.gui)
    with run.sim as sim:
        arm = run.scene.robot("arm")
        cubes = [run.scene.object(f"cube_{i}") for i in range(4)]
        for level, cube in enumerate(cubes):
            x, y, z = cube.get_pose().position
            top = HALF + 2 * HALF * level
            arm.add_action_sequence(
                [
                    PoseAction((x, y, z + 0.15)),  # above the cube
                    Pick(cube.object_id, ee_target_position=(x, y, z + 0.01), use_approach=False),
                    PoseAction((x, y, 0.3)),  # lift
                    PoseAction((*STACK, top + 0.2)),  # over the stack
                    Drop(
                        Pose.from_xyz(*STACK, top),
                        ee_target_position=(*STACK, top + 0.01),
                        use_approach=False,
                    ),
                ]
            )
        arm.add_action(PoseAction((0.4, 0.0, 0.5)))  # out of the way

        sim.run_simulation(None if args.steps is None else args.steps * sim.params.timestep)
        stacked = sum(abs(c.get_pose().x - STACK[0]) < 1e-9 for c in cubes)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        top = max(c.get_pose().z for c in cubes)
        print(f"cubes stacked: {stacked} of {len(cubes)}; stack top at z = {top:.3f} m")
        print(f"actions completed {sim.actions.completed_count}, failed {sim.actions.failed_count}")


if __name__ == "__main__":
    main()
