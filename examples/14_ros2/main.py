"""Ten simulated robots as ROS 2 robots, driven by a ROS 2 node in another process.

Serves ten robots over ROS 2 (odom, tf, cmd_vel, navigate_to_pose... on the loopback
interface, domain 42) and starts `node.py`, a plain rclpy node that sends each robot a
NavigateToPose goal and reports how they ended. Needs `pip install ".[ros2]"
./ros2-interfaces` (x86_64 Linux).
    python examples/14_ros2/main.py              # 30 simulated seconds at 4x real time
    python examples/14_ros2/main.py --steps 200
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings, loopback_environment


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--domain-id", type=int, default=42)
    args = parser.parse_args()
    params = SimulationParams(timestep=0.1, target_rtf=4.0)
    with MultiRobotSimulationCore(params) as sim:
        robots = [
            Agent.from_params(
                AgentSpawnParams(
                    "mobile_robot", name=f"amr_{k}", initial_pose=Pose.from_xyz(0, 1.5 * k, 0)
                ),
                sim,
            )
            for k in range(10)
        ]
        with Ros2Bridge(sim, robots, Ros2Settings(domain_id=args.domain_id)):
            node = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("node.py")),
                 *(r.name for r in robots), "--seconds", str(args.steps * 0.1 / 4.0)],
                env={**os.environ, **loopback_environment(args.domain_id)},
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            sim.run_simulation(args.steps * params.timestep)  # (paced: 4x real time)
            out, _ = node.communicate(timeout=60)
        print(out.strip())
        ahead = sum(r.get_pose().x > 2.9 for r in robots)
        print(f"robots three metres on: {ahead} of {len(robots)}")
        print(f"simulated {sim.sim_time:.2f} s in {args.steps} steps")


if __name__ == "__main__":
    main()
