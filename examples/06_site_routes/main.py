"""Robots on a site: route between named places of a navigation graph, staying on its lanes.

Loads the bundled `site_warehouse` scenario (aisles, lanes, chargers, pick faces, drop
stations), then sends each robot on a round of named places with `agent.go_to`, chaining the next
place from the last one's `on_done`. Every step it measures how far each robot is from the
nearest lane, and prints the worst. Run:
    python examples/06_site_routes/main.py              # headless, 300 simulated seconds
    python examples/06_site_routes/main.py --steps 300  # a fixed number of steps
    python examples/06_site_routes/main.py --gui        # watch (with --rtf 1 for real time)
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from fleetsim import Agent, MultiRobotSimulationCore
from fleetsim.actions import Action
from fleetsim.scenario import build, load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="step this many times (else run_simulation)")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    parser.add_argument("--rtf", type=float, default=None, help="target real-time factor")
    args = parser.parse_args()

    run = build(load_scenario("site_warehouse"), gui=args.gui or None, target_rtf=args.rtf)
    with run.sim as sim:
        site = sim.site
        assert site is not None
        robots = run.scene.robots
        for robot in robots:
            robot.clear_actions()  # drive our own rounds instead of the scenario's
        print(
            f"site: {len(site.graph)} nodes, {site.graph.lane_count} lanes; "
            f"chargers {site.graph.nodes_with('charger')}"
        )
        pickups, drops = site.graph.nodes_with("pickup"), site.graph.nodes_with("dropoff")
        visits = [0]

        def send(robot: Agent, rounds: itertools.cycle) -> None:  # type: ignore[type-arg]
            action = robot.go_to(next(rounds))

            def arrived(agent: Agent, done: Action) -> None:
                visits[0] += 1
                send(agent, rounds)

            action.on_done = arrived

        for k, robot in enumerate(robots):
            home = robot.current_node()
            send(robot, itertools.cycle([pickups[k], drops[k], home]))
        worst = [0.0]

        def off_lane(s: MultiRobotSimulationCore, dt: float) -> None:
            xy = np.array([r.get_pose().position[:2] for r in robots])
            worst[0] = max(worst[0], float(site.graph.lane_at(xy)[1].max()))

        sim.register_callback(off_lane)
        if args.steps is not None:
            for _ in range(args.steps):
                sim.step_once()
        else:
            sim.run_simulation()
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
        print(f"places reached: {visits[0]}; actions failed: {sim.actions.failed_count}")
        print(f"farthest any robot was from a lane: {worst[0] * 100:.1f} cm")
        kinds = ", ".join(f"{k} {n}" for k, n in sim.collision_counts.items())
        print(f"collisions: {sim.collision_count} ({kinds})")


if __name__ == "__main__":
    main()
