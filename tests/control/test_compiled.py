"""The compiled kernels of large fleets give the NumPy path's numbers, to the last bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import AgentManager, AgentSpawnParams, GridSpawnParams, Pose
from fleetsim.control import kernels as control_kernels
from fleetsim.control.omni import Motion, step_omni
from fleetsim.geometry import quat
from fleetsim.jit import compiled
from tests.conftest import make_sim

pytest.importorskip("numba")


def _rows(n: int, seed: int) -> tuple[Motion, np.ndarray, tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-20, 20, (n, 3))
    goal = pos + rng.normal(size=(n, 3)) * rng.choice([0.0, 0.01, 0.3, 5.0, 50.0], (n, 1))
    vel = rng.normal(size=(n, 3)) * rng.choice([0.0, 0.5, 3.0], (n, 1))
    motion = Motion(pos, rng.uniform(-3, 3, n), vel, np.zeros(n))
    limits = (rng.uniform(0.2, 3, n), rng.uniform(0.1, 4, n), np.full(n, 1.0), np.full(n, 2.0))
    return motion, goal, limits


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_compiled_omni_step_equals_numpy(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    motion, goal, limits = _rows(600, seed)
    n = len(goal)
    no_align = np.zeros(n, dtype=bool)
    align = np.random.default_rng(seed).random(n) < 0.5
    for aligned in (no_align, align):
        fast = step_omni(motion, goal, motion.yaw, aligned, limits, 0.1)
        monkeypatch.setattr(control_kernels, "MIN_ROWS", 10**9)
        slow = step_omni(motion, goal, motion.yaw, aligned, limits, 0.1)
        monkeypatch.undo()
        for a, b in (
            (fast[0].pos, slow[0].pos),
            (fast[0].vel, slow[0].vel),
            (fast[1], slow[1]),
            (fast[2], slow[2]),
            (fast[0].yaw, slow[0].yaw),
        ):
            assert np.array_equal(a, b)
        assert (fast[1] == 0).sum() > 20  # some rows landed on their goal this step


def test_the_compiled_omni_step_in_two_halves_equals_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """50,000 rows: the compiled translation runs in two halves on two threads (from
    `parallel.ROW_KERNEL_ROWS`), and gives NumPy's numbers, passing speeds included."""
    from fleetsim import parallel

    motion, goal, limits = _rows(50_000, 6)
    passing = np.random.default_rng(6).choice([0.0, 0.4, 2.0], len(goal))
    monkeypatch.setattr(parallel.environment, "threads", lambda: 2)
    assert len(parallel.halves(len(goal))) == 2
    halves = step_omni(motion, goal, motion.yaw, np.zeros(len(goal), bool), limits, 0.1, passing)
    monkeypatch.setattr(control_kernels, "MIN_ROWS", 10**9)
    plain = step_omni(motion, goal, motion.yaw, np.zeros(len(goal), bool), limits, 0.1, passing)
    for a, b in zip(
        (halves[0].pos, halves[0].vel, halves[1]),
        (plain[0].pos, plain[0].vel, plain[1]),
        strict=True,
    ):
        assert np.array_equal(a, b)
    assert (halves[1] == 0).sum() > 1000


@pytest.mark.parametrize("aligning", [2, 0], ids=["half-turning", "none-turning"])
def test_a_large_fleet_drives_the_same_with_and_without_numba(
    aligning: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 robots to random goals (half of them turning to a goal yaw, or none) for 80 steps:
    the translation compiled and in place, the turns with NumPy; identical poses with the
    compiled kernels (from 128 rows) and with NumPy only."""
    from fleetsim.collision import kernels as collision_kernels
    from fleetsim.control import system

    in_place: list[int] = []
    drive, vectorised = control_kernels.omni_drive, system.step_omni
    monkeypatch.setattr(
        control_kernels, "omni_drive", lambda *a: in_place.append(len(a[0])) or drive(*a)
    )
    gathered: list[int] = []
    monkeypatch.setattr(
        system, "step_omni", lambda m, *a: gathered.append(len(m.pos)) or vectorised(m, *a)
    )

    def run() -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
        with make_sim(timestep=0.1) as sim:
            robots = AgentManager(sim).spawn_agents_grid(
                300,
                GridSpawnParams(x_max=40, y_max=40, spacing=2.0),
                AgentSpawnParams(urdf_path="simple_cube"),
            )
            rng = np.random.default_rng(9)
            for k, robot in enumerate(robots):
                x, y = rng.uniform(0, 40, 2)
                robot.set_goal(
                    Pose.from_yaw(x, y, 0.0, rng.uniform(-3, 3)),
                    align_orientation=aligning > 0 and k % aligning == 0,
                )
            collisions = set()
            for _ in range(80):
                sim.step_once()
                collisions |= set(sim.get_active_collision_pairs())
            bodies = sim._world.bodies
            return bodies["pos"].copy(), bodies["quat"].copy(), sorted(collisions)

    compiled = run()
    assert in_place  # the compiled translation ran
    assert not gathered  # turning or not, in place on the tables (the turns with NumPy)
    for module in (control_kernels, collision_kernels):
        monkeypatch.setattr(
            module, "MIN_ROWS" if module is control_kernels else "MIN_BODIES", 10**9
        )
    plain = run()
    assert np.array_equal(compiled[0], plain[0]) and np.array_equal(compiled[1], plain[1])
    assert compiled[2] == plain[2] and len(compiled[2]) > 0


@pytest.mark.parametrize("seed", [4, 5])
def test_the_compiled_step_through_waypoints_equals_numpy(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows passing through their goal (a path's waypoint) at a speed each may keep: the
    compiled translation gives NumPy's numbers, landings and passing speeds included."""
    motion, goal, limits = _rows(600, seed)
    rng = np.random.default_rng(seed)
    passing = rng.choice([0.0, 0.05, 0.4, 2.0], len(goal))
    aligned = rng.random(len(goal)) < 0.3
    fast = step_omni(motion, goal, motion.yaw, aligned, limits, 0.1, passing)
    monkeypatch.setattr(control_kernels, "MIN_ROWS", 10**9)
    slow = step_omni(motion, goal, motion.yaw, aligned, limits, 0.1, passing)
    for a, b in (
        (fast[0].pos, slow[0].pos),
        (fast[0].vel, slow[0].vel),
        (fast[1], slow[1]),
        (fast[2], slow[2]),
        (fast[0].yaw, slow[0].yaw),
    ):
        assert np.array_equal(a, b)
    assert (fast[1] == 0).sum() > 20


def test_a_warm_process_drives_a_small_fleet_compiled_with_the_same_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`jit.warm()` (a sweep's or a fuzz's worker) uses the kernels below `MIN_ROWS` too: the
    bundled 100-robot warehouse (paths through waypoints, traffic control) runs to the same
    poses and results as with NumPy only."""
    from fleetsim import jit
    from fleetsim.scenario import build, load_scenario
    from fleetsim.scenario.runner import run_scenario

    def run() -> tuple[np.ndarray, dict[str, object]]:
        built = build(load_scenario("warehouse", ["simulation.duration=60"]))
        with built.sim as sim:
            summary = run_scenario(built)
            return sim._world.bodies["pos"].copy(), summary.kpis

    plain = run()
    in_place: list[int] = []
    drive = control_kernels.omni_drive
    monkeypatch.setattr(
        control_kernels, "omni_drive", lambda *a: in_place.append(len(a[0])) or drive(*a)
    )
    monkeypatch.setattr(jit, "_eager", [False])
    assert jit.warm() and jit.eager()
    warm = run()
    assert in_place and max(in_place) <= 100  # compiled, for fewer rows than MIN_ROWS
    assert np.array_equal(plain[0], warm[0]) and plain[1] == warm[1]


def test_the_compiled_passing_speeds_equal_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed each robot may keep through its path's next waypoint (omnidirectional and
    differential robots, paths turning by every angle, speed limits on the legs): compiled
    and NumPy alike, to the last bit."""
    from fleetsim import Agent

    with make_sim(timestep=0.1) as sim:
        rng = np.random.default_rng(11)
        for k in range(300):
            kind = "differential" if k % 3 == 0 else "omnidirectional"
            robot = Agent.from_urdf(
                "simple_cube",
                Pose.from_xyz(3.0 * (k % 20), 3.0 * (k // 20), 0),
                sim_core=sim,
                motion_mode=kind,
            )
            here = np.array([3.0 * (k % 20), 3.0 * (k // 20), 0.0])
            points = here + np.cumsum(rng.normal(size=(4, 3)) * [2, 2, 0], axis=0)
            points[rng.random(4) < 0.2] = points[0]  # (some legs straight on)
            sim.world.motion.set_path(
                robot.motion_handle,
                points,
                np.zeros(4),
                False,
                0.05,
                rng.choice([np.inf, 0.3, 1.0], 4),
            )
        for _ in range(3):
            sim.step_once()
        motion = sim.world.motion
        a = motion.agents
        rows = np.flatnonzero(a["state"] != 0)
        pos = sim.world.bodies["pos"][sim.world.bodies.rows(a["body"][rows])]
        max_v = a["max_v"][rows] * rng.uniform(0.2, 1.0, rows.size)
        fast = motion._pass_speeds(rows, pos, max_v, 0.1)
        monkeypatch.setattr(control_kernels, "MIN_ROWS", 10**9)
        monkeypatch.setattr(control_kernels.jit, "eager", lambda: False)
        slow = motion._pass_speeds(rows, pos, max_v, 0.1)
        assert fast is not None and slow is not None and np.array_equal(fast, slow)
        assert (fast > 0).sum() > 30 and (fast == 0).sum() > 30


def test_a_differential_fleet_drives_the_same_with_and_without_numba(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """300 differential-drive robots turning in place and driving to random goals (a third
    turning to a goal yaw at the end, a fifth following paths through waypoints) for 150
    steps: the compiled step (in place on the tables) and NumPy's give identical poses, speeds,
    yaw rates and contacts."""
    from fleetsim.collision import kernels as collision_kernels
    from fleetsim.control import system

    in_place: list[int] = []
    drive = system.differential_drive
    monkeypatch.setattr(
        system, "differential_drive", lambda *a: in_place.append(len(a[0])) or drive(*a)
    )

    fastest = np.zeros(300)  # each robot's top speed over the run

    def run() -> tuple[np.ndarray, ...]:
        with make_sim(timestep=0.1) as sim:
            robots = AgentManager(sim).spawn_agents_grid(
                300,
                GridSpawnParams(x_max=30, y_max=30, spacing=1.5),
                AgentSpawnParams(
                    urdf_path="simple_cube", motion_mode="differential", max_angular_vel=1.5
                ),
            )
            rng = np.random.default_rng(21)
            for k, robot in enumerate(robots):
                here = robot.get_pose().position
                if k % 5 == 0:
                    points = here + np.cumsum(rng.normal(size=(3, 3)) * [2, 2, 0], axis=0)
                    sim.world.motion.set_path(
                        robot.motion_handle,
                        points,
                        np.zeros(3),
                        False,
                        0.05,
                        rng.choice([np.inf, 0.4], 3),
                    )
                    continue
                x, y = rng.uniform(0, 30, 2)
                robot.set_goal(
                    Pose.from_yaw(x, y, 0.0, rng.uniform(-3, 3)), align_orientation=k % 3 == 0
                )
                if k % 7 == 0:  # a fleet manager's speed override: limits scaled
                    robot.set_speed_override(0.4)
            contacts = set()
            for _ in range(150):
                sim.step_once()
                contacts |= set(sim.get_active_collision_pairs())
                vel = sim.world.motion.agents["vel"]
                np.maximum(fastest, np.hypot(vel[:, 0], vel[:, 1]), out=fastest)
            a, b = sim.world.motion.agents, sim.world.bodies
            arrived = np.asarray([r.is_goal_reached() for r in robots])
            return (
                b["pos"].copy(),
                b["quat"].copy(),
                a["vel"].copy(),
                a["yaw_rate"].copy(),
                np.asarray(sorted(contacts)),
                arrived,
            )

    compiled = run()
    assert in_place and max(in_place) == 300  # the whole fleet, compiled
    for module in (control_kernels, collision_kernels):
        monkeypatch.setattr(
            module, "MIN_ROWS" if module is control_kernels else "MIN_BODIES", 10**9
        )
    in_place.clear()
    plain = run()
    assert not in_place
    for fast, slow in zip(compiled, plain, strict=True):
        assert np.array_equal(fast, slow)
    assert 30 < compiled[5].sum() < 300 and len(compiled[4]) > 0  # some arrived, some touched
    turned = np.abs(quat.yaw_of(compiled[1])) > 0.1
    assert turned.sum() > 150  # they turned
    slowed = np.arange(300) % 7 == 0
    slowed[::5] = False  # (those follow paths)
    assert 0 < max(fastest[slowed]) <= 0.4 * max(fastest[~slowed]) + 1e-9  # the override held


def test_robots_holding_their_heading_are_skipped_with_the_same_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """300 robots aligning with their goal's yaw (the default of `set_goal`): the compiled turn
    skips the rows holding their heading (the last turn left them as they were, their inputs
    unchanged), and every change of an input turns a row again: new goals and goal yaws, poses
    set by hand, speed overrides and fault factors, robots held and released, alignment
    switched off. Poses and yaw rates equal the NumPy path's, to the last bit, every step."""
    from fleetsim.collision import kernels as collision_kernels

    turned: list[int] = []

    def run() -> list[tuple[bytes, bytes, bytes]]:
        with make_sim(timestep=0.1) as sim:
            robots = AgentManager(sim).spawn_agents_grid(
                300,
                GridSpawnParams(x_max=40, y_max=40, spacing=2.0),
                AgentSpawnParams(urdf_path="simple_cube", max_angular_vel=1.5),
            )
            rng = np.random.default_rng(11)

            def new_goals(some: list[int], align: bool = True) -> None:
                for k in some:
                    x, y, z = robots[k].get_pose().position
                    near = rng.random() < 0.5  # half turn on the spot, half drive as well
                    gx, gy = (x, y) if near else rng.uniform(0, 40, 2)
                    pose = Pose.from_yaw(gx, gy, z, rng.uniform(-3.1, 3.1))
                    robots[k].set_goal(pose, align_orientation=align)

            new_goals(list(range(300)))
            frames = []
            for step in range(120):
                if step == 40:
                    new_goals(list(range(0, 300, 7)))  # new goal yaws for some
                if step == 50:
                    for k in range(1, 300, 11):  # turned by hand where they stand
                        p = robots[k].get_pose()
                        robots[k].set_pose(Pose.from_yaw(p.x, p.y, p.z, float(k % 5)))
                if step == 60:
                    for k in range(2, 300, 13):
                        robots[k].set_speed_override(0.5)
                    for k in range(3, 300, 17):
                        robots[k].set_fault_speed(0.25)
                if step == 70:
                    for k in range(4, 300, 19):
                        robots[k].hold()
                if step == 80:
                    for k in range(4, 300, 19):
                        robots[k].release()
                    new_goals(list(range(5, 300, 23)), align=False)
                sim.step_once()
                world = sim._world
                turned.append(world.motion._turns.turned)
                frames.append(
                    (
                        world.bodies["pos"].tobytes(),
                        world.bodies["quat"].tobytes(),
                        world.motion.agents["yaw_rate"].tobytes(),
                    )
                )
            return frames

    compiled = run()
    assert turned[0] == 300 and min(turned) < 60  # most rows skipped once they hold
    assert max(turned[40:45]) > min(turned[30:40]) and turned[50] > turned[49]  # turned again
    monkeypatch.setattr(control_kernels, "MIN_ROWS", 10**9)
    monkeypatch.setattr(collision_kernels, "MIN_BODIES", 10**9)
    plain = run()
    for step, (a, b) in enumerate(zip(compiled, plain, strict=True)):
        assert a == b, f"step {step}"


@pytest.mark.parametrize(("far", "numpy_sines"), [(False, False), (True, False), (False, True)])
def test_the_compiled_turn_in_two_halves_equals_numpy(
    far: bool, numpy_sines: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40,000 rows (from `parallel.ROW_KERNEL_ROWS` the rows are driven and picked, and
    NumPy's arctangents and sines taken, in two halves on two threads), some aligning, some
    still turning, some neither: three steps of `omni_turn.drive` (the second and third with
    rows held) give NumPy's `turn` to the last bit, and the drive that picked them the same
    positions and velocities as the drive alone. `far`: some goal yaws several turns away
    (12 rad, -40 rad, 1e6 rad), which the vector turn leaves to NumPy's, in the second half
    only. Some bodies tilted, some with a -0 in the quaternion's x. `numpy_sines`: NumPy's
    sines between the passes, as on a machine where the C library's are not NumPy's (else
    the write pass takes them itself wherever they are)."""
    from fleetsim.control import omni_turn as turn_module

    if numpy_sines:
        monkeypatch.setattr(turn_module, "sines_agree", lambda: False)
    from fleetsim import parallel
    from fleetsim.control.omni import turn
    from fleetsim.control.omni_turn import TurnMemory

    monkeypatch.setattr(parallel.environment, "threads", lambda: 2)
    n = 40_000
    rng = np.random.default_rng(8)
    a = {
        "yaw_rate": rng.choice([0.0, 0.0, 0.3, -1.2], n),
        "goal_yaw": rng.uniform(-3.1, 3.1, n),
        "align": rng.random(n) < 0.6,
        "max_w": rng.uniform(0.5, 2.0, n),
        "speed_scale": rng.choice([1.0, 0.5], n),
        "max_alpha": rng.uniform(1.0, 4.0, n),
        "vel": rng.uniform(-1, 1, (n, 3)),
        "goal": rng.uniform(-20, 20, (n, 3)),
        "max_v": rng.uniform(0.5, 2.0, n),
        "leg_v": rng.choice([np.inf, 0.7], n),
        "max_a": rng.uniform(0.5, 3.0, n),
    }
    a["goal_yaw"][: n // 4] = 0.0  # a quarter already facing their goal's yaw: held at once
    if far:
        a["goal_yaw"][-300::3] = rng.choice([12.0, -40.0, 1e6], 100)
    b = {
        "quat": quat.from_yaw(np.where(np.arange(n) < n // 4, 0.0, rng.uniform(-3, 3, n))),
        "pos": rng.uniform(-20, 20, (n, 3)),
    }
    tilted = rng.normal(size=(200, 4))  # (bodies set tilted by hand: the turn levels them)
    b["quat"][-400::2] = tilted / np.linalg.norm(tilted, axis=1)[:, None]
    b["quat"][-401::-97, 0] = -0.0  # (a yaw-only quaternion but for the sign of its x)
    order = rng.permutation(n)  # (agent rows and body rows in another order)
    rows, body_rows = np.arange(n), order
    memory = TurnMemory()
    from fleetsim.control import omni

    fallbacks: list[int] = []  # (the rows of each call of NumPy's turn in place of the vector one)
    monkeypatch.setattr(
        omni, "turn", lambda yaw, *rest: fallbacks.append(len(yaw)) or turn(yaw, *rest)
    )
    limits = tuple(a[k] for k in ("max_v", "speed_scale", "leg_v", "max_a"))
    for _ in range(3):
        expected_q, expected_rate = b["quat"].copy(), a["yaw_rate"].copy()
        expected_left = np.zeros(n)
        turning = a["align"] | (a["yaw_rate"] != 0)
        yaw, rate, expected_left[turning] = turn(
            quat.yaw_of(b["quat"][order][turning]),
            a["yaw_rate"][turning],
            a["goal_yaw"][turning],
            a["align"][turning],
            a["max_w"][turning] * a["speed_scale"][turning],
            a["max_alpha"][turning],
            0.1,
        )
        expected_q[order[turning]], expected_rate[turning] = quat.from_yaw(yaw), rate
        pos, vel = b["pos"].copy(), a["vel"].copy()
        alone = control_kernels.omni_drive(rows, body_rows, pos, vel, a["goal"], limits, 0.1)
        dist_left, left = turn_module.drive(rows, body_rows, a, b, 0.1, memory)
        assert np.array_equal(b["quat"], expected_q)
        assert np.array_equal(a["yaw_rate"], expected_rate)
        assert np.array_equal(left, expected_left)
        assert np.array_equal(b["pos"], pos) and np.array_equal(a["vel"], vel)
        assert np.array_equal(dist_left, alone[0])
    assert 0 < memory.turned < np.count_nonzero(turning)  # some rows held, some turned
    assert memory.turned >= parallel.ROW_KERNEL_ROWS  # (the sines in halves too)
    assert len(fallbacks) == (3 if far else 0)  # the second half, with the far goal yaws
    assert not far or 0 < fallbacks[0] < n // 2


def test_the_vector_turn_equals_numpy_at_the_turns_edges() -> None:
    """The vector turn (`omni_turn._turn_packed`, `quat.wrap_angle`'s remainder written out as
    one turn less or more) gives NumPy's `turn` to the last bit for yaws and goal yaws on and
    beside the edges where the remainder changes (0, pi, 2 pi, 3 pi, signed zeros, the next
    floats), and says which rows it cannot take (angles several turns away, NaN)."""
    from fleetsim.control.omni import turn
    from fleetsim.control.omni_turn import _turn_packed

    kernel = compiled(_turn_packed)
    edges = [0.0, -0.0, np.pi, -np.pi, np.pi / 2, 2 * np.pi, -2 * np.pi, 3 * np.pi, 1e-300, 7.0]
    special = np.array([v for e in edges for v in (e, np.nextafter(e, 9), np.nextafter(e, -9))])
    yaw, goal = (g.ravel() for g in np.meshgrid(special, special))
    rng = np.random.default_rng(4)
    yaw = np.concatenate([yaw, rng.uniform(-np.pi, np.pi, 500), [0.1, 0.2]])
    goal = np.concatenate([goal, rng.uniform(-40, 40, 500), [np.nan, 1e6]])
    n = len(yaw)
    rate = rng.choice([0.0, 0.5, -1.5, 3.0], n)
    align = rng.random(n) < 0.8
    max_w, alpha = rng.uniform(0.5, 2, n), rng.choice([1.0, 2.5], n)
    taken = 0
    for j in range(n):
        inputs = (x[j : j + 1] for x in (yaw, rate, goal, align, max_w, alpha))
        row = tuple(inputs)
        out = (np.empty(1), np.empty(1), np.empty(1))
        if kernel(*row[:6], 0.1, *out):
            continue  # (left to NumPy's turn)
        wrapped, new_rate, left = turn(*row, 0.1)
        expected = (new_rate, wrapped / 2, left)
        for got, want in zip(out, expected, strict=True):
            assert got.tobytes() == want.tobytes(), (yaw[j], goal[j], rate[j], align[j])
        taken += 1
    inside = (np.abs(yaw) <= np.pi) & (np.abs(goal) <= np.pi)
    assert taken >= np.count_nonzero(inside) and taken < n - 200  # (the far goal yaws: NumPy's)


def test_the_write_pass_takes_its_own_sines_only_where_they_are_numpys() -> None:
    """The trial (`sines_agree`) finds the C library's sines in the compiled write pass the
    same as NumPy's to the last bit, or says not: one sine a last bit off, or one angle's
    cosine, is found; where it says they agree, they agree over 200,000 more angles."""
    from fleetsim.control import omni_turn as turn_module

    def one_off(x: np.ndarray) -> np.ndarray:
        return np.where(x == np.pi / 4, np.nextafter(np.cos(x), 2), np.cos(x))

    assert not turn_module._sines_agree(lambda x: np.nextafter(np.sin(x), 2), np.cos)
    assert not turn_module._sines_agree(np.sin, one_off)
    more = np.random.default_rng(3).uniform(-np.pi / 2, np.pi / 2, 200_000)
    assert turn_module._sines_agree(np.sin, np.cos, more) == turn_module.sines_agree()

    def both(half: np.ndarray, sin: np.ndarray, cos: np.ndarray) -> None:
        for j in range(len(half)):
            sin[j], cos[j] = math.sin(half[j]), math.cos(half[j])

    kernel = compiled(both)  # (the C library's sines compiled apart from the write pass)
    sin, cos = np.empty(len(more)), np.empty(len(more))
    kernel(more, sin, cos)
    same = np.array_equal(sin, np.sin(more)) and np.array_equal(cos, np.cos(more))
    assert turn_module.sines_agree() == same
