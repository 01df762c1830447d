"""One benchmark case in a fresh process; prints one JSON line. Runs under any interpreter.

    python worker.py '{"impl": "fleetsim", "n": 1000, "steps": 100, ...}'

The same workload for every implementation: N copies of the same cube URDF on a grid 2 m apart,
omnidirectional, a 0.1 s step, half of them driving to random goals (seeded), a collision check
every step. `impl` is "fleetsim", "peer" (the pybullet-fleet package, through its public API
only), "arms" (N fixed-base bundled arms cycling through joint targets, checked every step),
"crowd" (N bundled `mobile_robot`s in one aisle, `fleetsim.bench.crowd`), "dense" (the same
cubes 0.6 m apart, every one driving to random goals, omnidirectional or differential-drive by
`motion`: tens of thousands of contacts at once) or "fleet" (the warehouse grown for N robots,
run by its fleet manager: `fleetsim.bench.fleet`) or "lorr" (the League of Robot Runners' kit
mode with N robots on a 170 x 500 warehouse: `fleetsim.bench.lorr`).
Only the standard library is imported at the top so a peer-only environment can run it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

TIMESTEP = 0.1
SPACING = 2.0
DENSE_SPACING = 0.6  # the cubes are 0.4 m: closer than twice their size
DENSE_EVERY = 25  # steps between sending the robots that arrived on to new goals


def rss_bytes() -> int:
    """Resident memory of this process (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def goals(
    n: int, seed: int, spacing: float = SPACING, share: float = 0.5
) -> list[tuple[int, float, float]]:
    """(robot index, x, y) for `share` of the robots (half): random points of the fleet's
    square."""
    rng = random.Random(seed)
    side = spacing * math.ceil(math.sqrt(n))
    movers = rng.sample(range(n), int(n * share))
    return [(i, rng.uniform(0, side), rng.uniform(0, side)) for i in movers]


def run_fleetsim(case: dict[str, Any]) -> dict[str, Any]:
    """Run one fleetsim case in this process: spawn, warm up, time the steps; its row."""
    from fleetsim import Pose, SimulationParams

    params = SimulationParams(
        timestep=TIMESTEP,
        target_rtf=0,
        seed=0,
        pose_sync=case.get("sync", "auto"),
        # "eager" times pushing every moved pose to PyBullet: every robot needs its body then.
        body_creation="eager" if case.get("sync") == "eager" else "auto",
        collision_narrowphase=case.get("narrow", "closest_points"),
        collision_check_frequency=None,
    )
    spacing, share = case.get("spacing", SPACING), case.get("movers", 0.5)
    with _grid_fleet(case, params, spacing) as (sim, manager, spawn_s, before):
        agents = manager.agents
        for i, x, y in goals(case["n"], case["seed"], spacing, share):
            agents[i].set_goal(Pose.from_xyz(x, y, 0.0))  # as the README sets goals: aligning
        return _time_steps(sim.step_once, case, spawn_s, before)


@contextlib.contextmanager
def _grid_fleet(case: dict[str, Any], params: Any, spacing: float) -> Iterator[tuple[Any, ...]]:
    """A simulation with `case["n"]` robots of `case["urdf"]` on a grid `spacing` apart
    (`case["motion"]`, omnidirectional by default): (sim, their AgentManager, spawn seconds,
    memory just before spawning)."""
    from fleetsim import AgentManager, AgentSpawnParams, GridSpawnParams, MultiRobotSimulationCore

    n = case["n"]
    with MultiRobotSimulationCore(params) as sim:
        before = rss_bytes()
        t0 = time.perf_counter()
        side = spacing * math.ceil(math.sqrt(n))
        manager = AgentManager(sim)
        manager.spawn_agents_grid(
            n,
            GridSpawnParams(x_max=side, y_max=side, spacing=spacing),
            AgentSpawnParams(
                urdf_path=case["urdf"], motion_mode=case.get("motion", "omnidirectional")
            ),
        )
        yield sim, manager, time.perf_counter() - t0, before


ARM_POSES = [[0.8, 0.6, 1.0, 0.4, 0.0], [-0.8, -0.4, 1.6, -0.6, 1.0], [0.0, 0.2, 0.4, 0.0, -1.0]]


def run_arms(case: dict[str, Any]) -> dict[str, Any]:
    """N kinematic bundled arms 2 m apart, each cycling through joint configurations."""
    from fleetsim import Agent, JointAction, MultiRobotSimulationCore, Pose, SimulationParams

    n = case["n"]
    params = SimulationParams(
        timestep=TIMESTEP, target_rtf=0, seed=0, collision_check_frequency=None
    )
    with MultiRobotSimulationCore(params) as sim:
        before = rss_bytes()
        t0 = time.perf_counter()
        cols = math.ceil(math.sqrt(n))
        arms = [
            Agent.from_urdf(
                "arm_robot",
                Pose.from_xyz(SPACING * (i % cols), SPACING * (i // cols), 0),
                sim_core=sim,
                use_fixed_base=True,
            )
            for i in range(n)
        ]
        spawn_s = time.perf_counter() - t0
        done = [0]

        def again(agent: Any, action: Any) -> None:
            done[0] += 1
            agent.add_action(JointAction(ARM_POSES[done[0] % len(ARM_POSES)]))

        sim.on("action_completed", again)
        for k, arm in enumerate(arms):
            arm.add_action(JointAction(ARM_POSES[k % len(ARM_POSES)]))
        result = _time_steps(sim.step_once, case, spawn_s, before)
        if done[0] == 0:
            raise RuntimeError("no joint action completed: the arms did not move")
        return {**result, "joint_actions_done": done[0]}


def run_crowd(case: dict[str, Any]) -> dict[str, Any]:
    """N bundled `mobile_robot`s in one aisle with the default settings (`fleetsim.bench.crowd`),
    sent on to new goals every 25 steps."""
    from fleetsim.bench.crowd import Crowd

    before = rss_bytes()
    t0 = time.perf_counter()
    crowd = Crowd(case["n"], seed=case["seed"] + 1)
    spawn_s = time.perf_counter() - t0
    steps = [0]

    def step() -> None:
        crowd.sim.step_once()
        steps[0] += 1
        if steps[0] % 25 == 0:
            crowd.send([r for r in crowd.robots if r.is_goal_reached()])

    try:
        result = _time_steps(step, case, spawn_s, before)
        return {**result, "touching": len(crowd.touching())}
    finally:
        crowd.sim.close()


def run_dense(case: dict[str, Any]) -> dict[str, Any]:
    """N cubes `spacing` apart (0.6 m by default), every one driving to a random point of the
    fleet's square (seeded), goals set as users set them (`set_goal(pose)`: turning to the
    goal's yaw); those that arrived sent on every `every` steps (25; 1: on arrival);
    `motion` "omnidirectional" or "differential"."""
    import numpy as np

    from fleetsim import Pose, SimulationParams

    params = SimulationParams(
        timestep=TIMESTEP,
        target_rtf=0,
        seed=0,
        collision_narrowphase=case.get("narrow", "closest_points"),
        collision_check_frequency=None,
    )
    rng = np.random.default_rng(case["seed"])
    spacing, every = case.get("spacing", DENSE_SPACING), case.get("every", DENSE_EVERY)
    side = spacing * math.ceil(math.sqrt(case["n"]))
    with _grid_fleet(case, params, spacing) as (sim, manager, spawn_s, before):

        def send(robots: list[Any]) -> None:
            for robot, (x, y) in zip(robots, rng.uniform(0, side, (len(robots), 2)), strict=True):
                robot.set_goal(Pose.from_xyz(float(x), float(y), 0.0))

        send(manager.agents)
        steps = [0]
        contacts: list[int] = []

        def step() -> None:
            sim.step_once()
            steps[0] += 1
            if steps[0] % DENSE_EVERY == 0:  # (a list of the pairs: not every step)
                contacts.append(len(sim.collisions.active_pairs))
            if steps[0] % every == 0:
                send(manager.get_arrived())  # (one array operation for the fleet)

        result = _time_steps(step, case, spawn_s, before)
        contacts.sort()
        return {**result, "contacts": contacts[len(contacts) // 2] if contacts else 0}


def run_fleet(case: dict[str, Any]) -> dict[str, Any]:
    """The warehouse grown for N robots, run by its fleet manager (`fleetsim.bench.fleet`)."""
    from fleetsim.bench.fleet import run_fleet as run

    return {**case, **run(case["n"], case["seconds"])}


def run_sensors(case: dict[str, Any]) -> dict[str, Any]:
    """N robots with lidars in the grown warehouse (`fleetsim.bench.sensors`)."""
    from fleetsim.bench.sensors import run_sensors as run

    return {**case, **run(case["n"], case["seconds"])}


def run_lorr(case: dict[str, Any]) -> dict[str, Any]:
    """Kit mode with N robots (`fleetsim.bench.lorr`): the loop's and the entries' time a tick."""
    from fleetsim.bench.lorr import run_case

    return {**case, **run_case(case["n"], case["ticks"], case.get("entries"))}


def run_peer(case: dict[str, Any]) -> dict[str, Any]:
    """Run one case on the peer (`pybullet-fleet`) in this process; its row."""
    import pybullet_fleet as pf

    n = case["n"]
    params = pf.SimulationParams(
        timestep=TIMESTEP,
        target_rtf=0,
        gui=False,
        monitor=False,
        enable_monitor_gui=False,
        collision_check_frequency=None,
    )
    sim = pf.MultiRobotSimulationCore(params)
    before = rss_bytes()
    t0 = time.perf_counter()
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    grid = pf.GridSpawnParams(
        x_min=0,
        x_max=cols - 1,
        y_min=0,
        y_max=rows - 1,
        spacing=[SPACING, SPACING, 0.0],
        offset=[0.0, 0.0, 0.0],
    )
    manager = pf.AgentManager(sim_core=sim)
    agents = manager.spawn_agents_grid(
        n, grid, pf.AgentSpawnParams(urdf_path=case["urdf"], motion_mode="omnidirectional")
    )
    spawn_s = time.perf_counter() - t0
    if len(agents) != n:
        raise RuntimeError(f"peer spawned {len(agents)} robots, expected {n}")
    for i, x, y in goals(n, case["seed"]):
        manager.set_goal_pose(i, pf.Pose.from_xyz(x, y, 0.0))
    return _time_steps(sim.step_once, case, spawn_s, before)


def _time_steps(step: Any, case: dict[str, Any], spawn_s: float, before: int) -> dict[str, Any]:
    """Median step time after warm-up; memory is what the process grew by from `before` (taken
    just before spawning) to the end of the timed steps: the robots and what stepping them
    needs."""
    for _ in range(case["warmup"]):
        step()
    times = []
    for _ in range(case["steps"]):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    times.sort()
    memory = rss_bytes() - before
    ms = 1e3 * times[len(times) // 2]
    return {
        **case,
        "ms_per_step": ms,
        "rtf": TIMESTEP * 1e3 / ms,
        "spawn_s": spawn_s,
        "memory_bytes": memory,
        "bytes_per_robot": memory / case["n"],
    }


def main() -> None:
    """Run the case given as JSON (argv[1]) and print its row as JSON (the suite's child)."""
    case = json.loads(sys.argv[1])
    runners = {
        "fleetsim": run_fleetsim,
        "arms": run_arms,
        "crowd": run_crowd,
        "dense": run_dense,
        "fleet": run_fleet,
        "sensors": run_sensors,
        "lorr": run_lorr,
        "peer": run_peer,
    }
    runner = runners[case["impl"]]
    result = runner(case)
    sys.stdout.flush()
    print("BENCH-RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
