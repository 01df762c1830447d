"""A mobile manipulator fetches boxes from two shelves and brings them to a drop-off table.

It drives (differential drive, approach and back-out poses), stops an arm's length short of the
box, reaches with its arm by joint targets, carries the box in its gripper, and reaches over the
table to put it down (a Pick or Drop beyond the gripper's reach would fail). Run:
    python examples/04_mobile_manipulator/main.py              # headless, 90 simulated seconds
    python examples/04_mobile_manipulator/main.py --steps 500  # a fixed number of steps
    python examples/04_mobile_manipulator/main.py --gui        # watch (target_rtf 1 is nicer)
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
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)

HERE = Path(__file__).parent
REACH = {"shoulder_lift_joint": 0.8, "elbow_joint": 1.0}  # arm forward and down
ARM_OUT = 0.82  # metres from the base to the gripper with the arm at REACH: stand that far off


def static_box(
    sim: MultiRobotSimulationCore, xyz: tuple[float, float, float], half: tuple[float, float, float]
) -> None:
    shape = ShapeParams("box", half_extents=half, rgba_color=(0.5, 0.4, 0.3, 1))
    SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=shape,
            initial_pose=Pose.from_xyz(*xyz),
            collision_mode=CollisionMode.STATIC,
        ),
        sim_core=sim,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    params = SimulationParams.from_config(HERE / "config.yaml").replace(gui=args.gui)
    with MultiRobotSimulationCore(params) as sim:
        robot = Agent.from_urdf(
            "mobile_manipulator", sim_core=sim, motion_mode="differential", max_linear_vel=1.0
        )
        shelves = [(4.0, 2.0), (4.0, -2.0)]
        for x, y in shelves:
            static_box(sim, (x + 0.6, y, 0.15), (0.2, 0.3, 0.15))
        static_box(sim, (-3.6, 0.0, 0.15), (0.2, 0.5, 0.15))  # drop-off table
        crate = ShapeParams("box", half_extents=(0.05, 0.05, 0.05), rgba_color=(0.2, 0.6, 0.9, 1))
        boxes = [
            SimObject.from_params(
                SimObjectSpawnParams(
                    visual_shape=crate, initial_pose=Pose.from_xyz(x + 0.45, y, 0.35), pickable=True
                ),
                sim_core=sim,
            )
            for x, y in shelves
        ]
        for i, box in enumerate(boxes):
            robot.add_action_sequence(
                [
                    Pick(
                        target_object_id=box.object_id,
                        joint_targets=REACH,
                        approach_offset=1.5,
                        stand_offset=ARM_OUT,
                    ),
                    Drop(
                        Pose.from_xyz(-3.5, -0.2 + 0.4 * i, 0.35),
                        joint_targets=REACH,  # reach over the table, then let go
                        approach_offset=1.5,
                        drop_offset=ARM_OUT,
                    ),
                ]
            )

        if args.steps is not None:
            for _ in range(args.steps):
                sim.step_once()
        else:
            sim.run_simulation()
        delivered = sum(b.get_pose().x < -3 for b in boxes)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        where = tuple(round(v, 2) for v in robot.get_pose().position)
        print(f"boxes delivered: {delivered} of {len(boxes)}; robot at {where}")
        print(f"actions completed {sim.actions.completed_count}, failed {sim.actions.failed_count}")


if __name__ == "__main__":
    main()
