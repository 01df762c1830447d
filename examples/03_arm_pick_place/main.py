"""A Panda arm picks four cubes off a table, one by one, and stacks them elsewhere.

Pick and Drop move the arm by inverse kinematics (ee_target_position); the cube rides in the
gripper (attached to the end-effector link) in between. Run:
    python examples/03_arm_pick_place/main.py              # headless, 20 simulated seconds
    python examples/03_arm_pick_place/main.py --steps 500  # a fixed number of steps
    python examples/03_arm_pick_place/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fleetsim import (
    Agent,
    CollisionMode,
    Drop,
    MultiRobotSimulationCore,
    Pick,
    Pose,
    PoseAction,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)

HERE = Path(__file__).parent
HALF = 0.025  # cube half size, m
STACK = (0.35, -0.35)  # where the stack goes (x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    params = SimulationParams.from_config(HERE / "config.yaml").replace(gui=args.gui)
    with MultiRobotSimulationCore(params) as sim:
        arm = Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True)
        cube = ShapeParams("box", half_extents=(HALF, HALF, HALF), rgba_color=(0.9, 0.3, 0.2, 1))
        cubes = [
            SimObject.from_params(
                SimObjectSpawnParams(
                    visual_shape=cube, initial_pose=Pose.from_xyz(0.55, y, HALF), pickable=True
                ),
                sim_core=sim,
            )
            for y in (0.3, 0.2, 0.1, 0.0)
        ]
        SimObject.from_params(  # the bin's base plate, as static structure
            SimObjectSpawnParams(
                visual_shape=ShapeParams(
                    "box", half_extents=(0.1, 0.1, 0.005), rgba_color=(0.3, 0.3, 0.35, 1)
                ),
                initial_pose=Pose.from_xyz(*STACK, -0.005),
                collision_mode=CollisionMode.STATIC,
            ),
            sim_core=sim,
        )
        for level, c in enumerate(cubes):
            x, y, z = c.get_pose().position
            top = HALF + 2 * HALF * level
            arm.add_action_sequence(
                [
                    PoseAction((x, y, z + 0.15)),  # above the cube
                    Pick(
                        target_object_id=c.object_id,
                        ee_target_position=(x, y, z + 0.01),
                        use_approach=False,
                    ),
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

        if args.steps is not None:
            for _ in range(args.steps):
                sim.step_once()
        else:
            sim.run_simulation()
        stacked = sum(abs(c.get_pose().x - STACK[0]) < 1e-9 for c in cubes)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        top = max(c.get_pose().z for c in cubes)
        print(f"cubes stacked: {stacked} of {len(cubes)}; stack top at z = {top:.3f} m")
        print(f"actions completed {sim.actions.completed_count}, failed {sim.actions.failed_count}")


if __name__ == "__main__":
    main()
