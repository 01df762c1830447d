"""100 mobile robots shuttling crates between two banks of rack slots, with Pick and Drop.

Every robot has its own lane with a slot at each end: a pair of low rails that a crate rests on.
The robot drives in between, under the crate, lifts it, and carries it to the other end and
back, forever. The next trip is queued when a Drop completes (an event), so nothing polls. The
geometry leaves room for everything, so the collision counts printed at the end are all 0. Run:
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
N = 100  # robots, lanes and crates
LANE = 1.4  # metres between lanes: two crates turning side by side still clear
CRATE_Z, CARRY = 0.41, Pose.from_xyz(0, 0, 0.43)  # crate on the rails; lifted 2 cm on a robot
RAIL_Y = 0.44  # rails 0.88 m apart: the robot (0.51 m wide) turns in place between them


def lanes(x: float, z: float = 0.0) -> np.ndarray:
    """One point per lane at `x`: shape (N, 3)."""
    y = (np.arange(N) - (N - 1) / 2) * LANE
    return np.column_stack((np.full(N, x), y, np.full(N, z)))


def static_box(sim: MultiRobotSimulationCore, shape: ShapeParams, at: np.ndarray) -> None:
    SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=shape,
            initial_pose=Pose(at),
            collision_mode=CollisionMode.STATIC,
        ),
        sim_core=sim,
    )


def build(
    sim: MultiRobotSimulationCore,
) -> tuple[list[Agent], list[SimObject], np.ndarray, np.ndarray]:
    left, right = lanes(-20, CRATE_Z), lanes(20, CRATE_Z)
    rail = ShapeParams("box", half_extents=(0.4, 0.03, 0.1275), rgba_color=(0.45, 0.35, 0.25, 1))
    for slot in np.concatenate((left, right)):
        for side in (-RAIL_Y, RAIL_Y):
            static_box(sim, rail, slot + np.array([0.0, side, 0.1275 - CRATE_Z]))
    crate = ShapeParams("box", half_extents=(0.48, 0.48, 0.15), rgba_color=(0.9, 0.6, 0.2, 1))
    boxes = [
        SimObject.from_params(
            SimObjectSpawnParams(visual_shape=crate, initial_pose=Pose(p), pickable=True),
            sim_core=sim,
        )
        for p in left
    ]
    start = lanes(0.0)
    robots = AgentManager(sim).spawn_agents_grid(
        N,
        GridSpawnParams(
            x_min=0, x_max=0, y_min=start[0, 1], y_max=start[-1, 1], spacing=(1.0, LANE)
        ),
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
        kinds = ", ".join(f"{k} {n}" for k, n in sim.collision_counts.items())
        print(f"collisions: {sim.collision_count} ({kinds})")
        print(
            f"mean step time {sim.get_profiling_stats()['total']:.3f} ms for {len(robots)} robots"
        )


if __name__ == "__main__":
    main()
