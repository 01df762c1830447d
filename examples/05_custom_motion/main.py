"""Your own motion model: 200 car-like robots (forward only, 2 m turning radius) to random goals.

`cars.CarLike` moves all cars in one array call per step; fleetsim calls it for every agent
spawned with `motion_mode="car"`. Actions, collisions and everything else work unchanged. Run:
    python examples/05_custom_motion/main.py              # headless, 120 simulated seconds
    python examples/05_custom_motion/main.py --steps 300  # a fixed number of steps
    python examples/05_custom_motion/main.py --gui        # watch (target_rtf 1 is nicer)
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from cars import CarLike

from fleetsim import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MoveTo,
    MultiRobotSimulationCore,
    Pose,
    SimulationParams,
)
from fleetsim.control import register_motion_model

HERE = Path(__file__).parent
N = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    args = parser.parse_args()

    register_motion_model("car", CarLike(min_radius_m=2.0), force=True)
    params = SimulationParams.from_config(HERE / "config.yaml").replace(gui=args.gui)
    with MultiRobotSimulationCore(params) as sim:
        cars = AgentManager(sim).spawn_agents_grid(
            N,
            GridSpawnParams(x_min=-28, x_max=28, y_min=-28, y_max=28, spacing=4.0),
            AgentSpawnParams(urdf_path="simple_cube", motion_mode="car", max_linear_vel=3.0),
        )
        arrivals: list[int] = []  # one entry a goal reached

        def next_goal(car: Agent, action: object = None) -> None:
            x, y = sim.rng.uniform(-40, 40, size=2)
            move = MoveTo(Pose.from_xyz(float(x), float(y), 0), tolerance=0.3)
            move.on_done = lambda agent, done: (arrivals.append(1), next_goal(agent))
            car.add_action(move)

        for car in cars:
            next_goal(car)
        tightest = [math.inf]  # the smallest turning radius any car drove, checked every step

        def measure(sim: MultiRobotSimulationCore, dt: float) -> None:
            agents = sim.world.motion.agents
            rate = np.abs(agents["yaw_rate"])
            speed = np.hypot(agents["vel"][:, 0], agents["vel"][:, 1])
            turning = rate > 1e-9
            if turning.any():
                tightest[0] = min(tightest[0], float((speed[turning] / rate[turning]).min()))

        sim.register_callback(measure)
        sim.run_simulation(None if args.steps is None else args.steps * sim.params.timestep)
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        print(f"{N} cars, {len(arrivals)} goals reached")
        print(f"tightest turn driven: radius {tightest[0]:.2f} m (the model's limit: 2.00 m)")
        print(f"mean step time {sim.get_profiling_stats()['total']:.3f} ms")


if __name__ == "__main__":
    main()
