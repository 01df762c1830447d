"""A first fleetsim simulation: a ring of boxes driven by one vectorised callback.

A carrier box picks up a crate (attachment) and the fleet circles around the origin. Run:
    python examples/01_first_simulation/main.py              # headless, real time, 10 s
    python examples/01_first_simulation/main.py --steps 200  # 200 steps as fast as possible
    python examples/01_first_simulation/main.py --gui        # watch it in the PyBullet GUI
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fleetsim import (
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)
from fleetsim.geometry import quat

HERE = Path(__file__).parent
N_BOXES, RADIUS, SPEED = 12, 4.0, 0.5  # count, ring radius (m), angular speed (rad/s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times as fast as possible")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    params = SimulationParams.from_config(HERE / "config.yaml").replace(gui=args.gui)
    with MultiRobotSimulationCore(params) as sim:
        shape = ShapeParams("box", half_extents=(0.3, 0.2, 0.15), rgba_color=(0.2, 0.5, 0.9, 1))
        angles = np.linspace(0, 2 * np.pi, N_BOXES, endpoint=False)
        boxes = [
            SimObject.from_params(
                SimObjectSpawnParams(
                    visual_shape=shape,
                    initial_pose=Pose.from_yaw(RADIUS * np.cos(a), RADIUS * np.sin(a), 0.15, a),
                ),
                sim_core=sim,
            )
            for a in angles
        ]
        cube = ShapeParams(half_extents=(0.15, 0.15, 0.15), rgba_color=(0.8, 0.5, 0.2, 1))
        crate = SimObject.from_params(SimObjectSpawnParams(visual_shape=cube), sim_core=sim)
        boxes[0].attach_object(crate, Pose.from_xyz(0, 0, 0.3))  # rides on top of box 0
        handles = sim.handles_of(boxes)

        def circle(sim: MultiRobotSimulationCore, dt: float) -> None:
            """Move the whole ring in one array operation per step."""
            a = angles + SPEED * (sim.sim_time + dt)
            pos = np.column_stack((RADIUS * np.cos(a), RADIUS * np.sin(a), np.full(N_BOXES, 0.15)))
            sim.set_poses(handles, pos, quat.from_yaw(a + np.pi / 2))  # facing along the ring

        sim.register_callback(circle)
        if args.steps is not None:
            for _ in range(args.steps):
                sim.step_once()
        else:
            sim.run_simulation()
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        print(f"box 0 at {boxes[0].get_pose().position}, crate at {crate.get_pose().position}")
        print(f"mean step time {sim.get_profiling_stats()['total']:.3f} ms")


if __name__ == "__main__":
    main()
