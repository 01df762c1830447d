"""Traffic control at fleet scale: N robots on a lattice site, each sent to a random node
whenever it arrives. Step time with traffic control against the same fleet driving blindly
(go_to, no reservations), side by side in one run, with deadlocks and collisions.
    python benchmarks/traffic.py --robots 100 1000 --seconds 120
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.fleet.traffic import TrafficControl
from fleetsim.site import Site


def lattice_site(robots: int) -> Site:
    """A square lattice of two-way lanes 3 m apart with about 8 nodes per robot."""
    side = int(np.ceil(np.sqrt(robots * 8)))
    nodes = [
        {"name": f"n{r}_{c}", "x": 3.0 * c, "y": 3.0 * r} for r in range(side) for c in range(side)
    ]
    lanes = [
        {"from": f"n{r}_{c}", "to": f"n{r}_{c + 1}"} for r in range(side) for c in range(side - 1)
    ]
    lanes += [
        {"from": f"n{r}_{c}", "to": f"n{r + 1}_{c}"} for r in range(side - 1) for c in range(side)
    ]
    return Site.from_graph(nodes, lanes)


def run(robots: int, seconds: float, traffic_on: bool, seed: int = 1) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    site = lattice_site(robots)
    params = {"timestep": 0.1, "target_rtf": 0, "collision_narrowphase": "aabb"}
    with MultiRobotSimulationCore(SimulationParams.from_dict(params)) as sim:
        sim.set_site(site)
        graph = site.graph
        starts = rng.choice(len(graph), size=robots, replace=False)
        fleet = [
            Agent.from_urdf("simple_cube", Pose.from_xyz(*graph.xy[k], 0.25), sim_core=sim)
            for k in starts.tolist()
        ]
        if traffic_on:
            traffic = TrafficControl(sim, fleet)
            done = [0]

            def again(i: int) -> None:
                done[0] += 1
                traffic.send(i, int(rng.integers(len(graph))))

            traffic.on_arrival = again
            for i in range(robots):
                traffic.send(i, int(rng.integers(len(graph))))
        steps = int(seconds / 0.1)
        t0 = time.perf_counter()
        routed = 0
        for _ in range(steps):
            sim.step_once()
            if traffic_on:
                traffic.step()
            else:
                for robot in fleet:
                    if robot.get_current_action() is None:
                        robot.go_to(int(rng.integers(len(graph))))
                        routed += 1
        wall = time.perf_counter() - t0
        return {
            "step_ms": wall / steps * 1e3,
            "rtf": seconds / wall,
            "arrivals": done[0] if traffic_on else routed - robots,
            "deadlocks": len(traffic.deadlocks) if traffic_on else 0,
            "unresolved": sum(not d.resolved for d in traffic.deadlocks) if traffic_on else 0,
            "robot_collisions": sim.collision_counts["robot-robot"],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    print(
        f"{'robots':>7} {'mode':>8} {'ms/step':>8} {'rtf':>7} {'arrivals':>9} "
        f"{'deadlocks':>9} {'unresolved':>10} {'robot-robot':>11}"
    )
    for n in args.robots:
        for on in (False, True):
            r = run(n, args.seconds, on)
            print(
                f"{n:>7} {'traffic' if on else 'blind':>8} {r['step_ms']:>8.2f} {r['rtf']:>7.1f} "
                f"{r['arrivals']:>9} {r['deadlocks']:>9} {r['unresolved']:>10} "
                f"{r['robot_collisions']:>11}"
            )


if __name__ == "__main__":
    main()
