"""100 mobile robots shuttling boxes between two rows of racks, with Pick and Drop actions.

Each robot owns one box: it picks it from its slot on the left racks, drops it on its slot on the
right racks, and back again, forever. The next trip is queued when a Drop completes (an event),
so nothing polls. Run:
    python examples/02_fleet_pick_drop/main.py              # headless, 120 simulated seconds
    python examples/02_fleet_pick_drop/main.py --steps 300  # a fixed number of steps
    python examples/02_fleet_pick_drop/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fleetsim import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    CollisionMode,
    Drop,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pick,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)

HERE = Path(__file__).parent
N = 100  # robots, boxes and slots per side
BOX_Z, CARRY = 0.4, Pose.from_xyz(0, 0, 0.38)  # box height on the racks; on top of a robot


def slots(x0: float) -> np.ndarray:
    """A 10 x 10 grid of rack slots, 2 m apart, starting at x0."""
    return GridSpawnParams(
        x_min=x0, x_max=x0 + 18, y_min=-9, y_max=9, z_min=BOX_Z, spacing=2.0
    ).positions(N)


def build(
    sim: MultiRobotSimulationCore,
) -> tuple[list[Agent], list[SimObject], np.ndarray, np.ndarray]:
    left, right = slots(-30), slots(12)
    shelf = ShapeParams("box", half_extents=(0.3, 9.5, 0.05), rgba_color=(0.45, 0.35, 0.25, 1))
    for x in np.unique(
        np.concatenate((left[:, 0], right[:, 0]))
    ):  # one static shelf per slot column
        SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=shelf,
                initial_pose=Pose.from_xyz(x, 0, 0.25),
                collision_mode=CollisionMode.STATIC,
            ),
            sim_core=sim,
        )
    crate = ShapeParams("box", half_extents=(0.15, 0.15, 0.15), rgba_color=(0.9, 0.6, 0.2, 1))
    boxes = [
        SimObject.from_params(
            SimObjectSpawnParams(visual_shape=crate, initial_pose=Pose(p), pickable=True),
            sim_core=sim,
        )
        for p in left
    ]
    robots = AgentManager(sim).spawn_agents_grid(
        N,
        GridSpawnParams(x_min=-9, x_max=9, y_min=-9, y_max=9, spacing=2.0),
        AgentSpawnParams(
            urdf_path="mobile_robot",
            motion_mode="differential",
            max_linear_vel=1.5,
            max_linear_accel=1.0,
        ),
    )
    return robots, boxes, left, right


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    params = SimulationParams.from_config(HERE / "config.yaml").replace(gui=args.gui)
    with MultiRobotSimulationCore(params) as sim:
        robots, boxes, left, right = build(sim)
        trips = {
            robot.handle: (box, left[i], right[i])
            for i, (robot, box) in enumerate(zip(robots, boxes, strict=True))
        }
        delivered = [0]

        def send(robot: Agent, to_right: bool) -> None:
            box, a, b = trips[robot.handle]
            robot.add_action_sequence(
                [
                    Pick(target_object_id=box.object_id, attach_relative_pose=CARRY),
                    Drop(Pose(b if to_right else a)),
                ]
            )

        def on_done(robot: Agent, action: object) -> None:
            if isinstance(action, Drop):
                delivered[0] += 1
                box, a, _ = trips[robot.handle]
                send(robot, to_right=bool(np.allclose(box.get_pose().position, a)))

        sim.on("action_completed", on_done)
        for robot in robots:
            send(robot, to_right=True)

        if args.steps is not None:
            for _ in range(args.steps):
                sim.step_once()
        else:
            sim.run_simulation()
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        actions = sim.actions
        print(f"boxes delivered: {delivered[0]}")
        print(f"actions completed {actions.completed_count}, failed {actions.failed_count}")
        print(f"collision episodes: {sim.collision_count} (no traffic control in this demo)")
        print(
            f"mean step time {sim.get_profiling_stats()['total']:.3f} ms for {len(robots)} robots"
        )


if __name__ == "__main__":
    main()
