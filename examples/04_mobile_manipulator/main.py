"""A mobile manipulator fetches boxes from two shelves and brings them to a drop-off table.

The room (shelves, table, boxes, the robot) is a scenario file, `scene.yaml`; the work is queued
here. The robot drives (differential drive, approach and back-out poses), stops an arm's length
short of the box, reaches with its arm by joint targets, carries the box in its gripper, and
reaches over the table to put it down (a Pick or Drop beyond the gripper's reach would fail). Run:
    python examples/04_mobile_manipulator/main.py              # headless, 90 simulated seconds
    python examples/04_mobile_manipulator/main.py --steps 500  # a fixed number of steps
    python examples/04_mobile_manipulator/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fleetsim import Drop, Pick, Pose
from fleetsim.scenario import build, load_scenario

HERE = Path(__file__).parent
REACH = {"shoulder_lift_joint": 0.8, "elbow_joint": 1.0}  # arm forward and down
ARM_OUT = 0.82  # metres from the base to the gripper with the arm at REACH: stand that far off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    run = build(load_scenario(HERE / "scene.yaml"), gui=args.gui)
    with run.sim as sim:
        robot = run.scene.robot("robot")
        boxes = [run.scene.object("box_a"), run.scene.object("box_b")]
        for i, box in enumerate(boxes):
            pick = Pick(
                box.object_id, joint_targets=REACH, approach_offset=1.5, stand_offset=ARM_OUT
            )
            to_table = Pose.from_xyz(-3.5, -0.2 + 0.4 * i, 0.35)  # reach over it, then let go
            drop = Drop(to_table, joint_targets=REACH, approach_offset=1.5, drop_offset=ARM_OUT)
            robot.add_action_sequence([pick, drop])

        sim.run_simulation(None if args.steps is None else args.steps * sim.params.timestep)
        delivered = sum(b.get_pose().x < -3 for b in boxes)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        where = tuple(round(v, 2) for v in robot.get_pose().position)
        print(f"boxes delivered: {delivered} of {len(boxes)}; robot at {where}")
        print(f"actions completed {sim.actions.completed_count}, failed {sim.actions.failed_count}")


if __name__ == "__main__":
    main()
