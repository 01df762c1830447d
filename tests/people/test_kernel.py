"""The compiled crowd step (Numba) against the NumPy one: the same positions to 1e-9 m a step,
the same people near the same robots, on crowds sparse and dense, spread wide or packed, with
walls and robots; and the RiMEA tests passed on the NumPy path, as a machine without Numba
runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from fleetsim.environment import NO_NUMBA
from fleetsim.people import Obstacles, SpeedModel, Walls, box_sides, kernel, step_people

pytest.importorskip("numba", reason="the compiled step needs Numba (fleetsim[fast])")
pytestmark = pytest.mark.skipif(not kernel.available(), reason="Numba is not allowed here")


def both(x: np.ndarray, walls: Walls | None, robots: Obstacles | None, seed: int = 0) -> None:
    """One step both ways from `x`, compared."""
    rng = np.random.default_rng(seed)
    n = len(x)
    radius = rng.uniform(0.15, 0.25, n)
    v0 = rng.uniform(0.8, 1.8, n)
    target = x + rng.uniform(-8, 8, (n, 2))
    fast = step_people(x, radius, v0, target, 0.1, SpeedModel(), walls, robots, compiled=True)
    slow = step_people(x, radius, v0, target, 0.1, SpeedModel(), walls, robots, compiled=False)
    np.testing.assert_allclose(fast.positions, slow.positions, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.velocities, slow.velocities, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fast.remaining, slow.remaining, rtol=0, atol=1e-9)

    def pairs(result: object) -> dict[tuple[int, int], float]:
        i, k, gap = result.robot_pairs  # type: ignore[attr-defined]
        return {(int(a), int(b)): float(g) for a, b, g in zip(i, k, gap, strict=True)}

    p_fast, p_slow = pairs(fast), pairs(slow)
    assert p_fast.keys() == p_slow.keys()
    assert all(abs(p_fast[key] - p_slow[key]) < 1e-9 for key in p_fast)
    assert list(fast.robot_pairs[0]) == sorted(fast.robot_pairs[0])  # (by person)


def racks(rng: np.random.Generator, count: int, size: float) -> Walls:
    centres = rng.uniform(0, size, (count, 2))
    return Walls(box_sides(centres, np.tile([1.2, 0.4], (count, 1)), rng.uniform(0, 3, count)))


@pytest.mark.parametrize("density", [0.2, 1.0, 4.0])
def test_the_compiled_step_moves_people_as_the_numpy_step_does(density: float) -> None:
    rng = np.random.default_rng(int(density * 10))
    n = 600
    side = float(np.sqrt(n / density))
    x = rng.uniform(0, side, (n, 2))
    robots = Obstacles(
        rng.uniform(0, side, (40, 2)), rng.uniform(0.3, 0.7, 40), rng.uniform(-1.5, 1.5, (40, 2))
    )  # (driving: people see them coming)
    walls = racks(rng, 40, side)
    both(x, walls, robots)
    both(x, None, robots, seed=1)
    both(x, walls, None, seed=2)
    both(x, None, None, seed=3)


def test_people_spread_kilometres_apart_and_packed_in_one_spot() -> None:
    rng = np.random.default_rng(7)
    far = np.concatenate((rng.uniform(0, 3, (50, 2)), rng.uniform(0, 3, (50, 2)) + 40_000.0))
    both(far, None, Obstacles(far[::10] + 0.5, np.full(10, 0.4), np.zeros((10, 2))))
    packed = rng.uniform(0, 1.5, (400, 2))  # (hundreds within each one's reach: buffers grow)
    both(packed, racks(rng, 3, 1.5), Obstacles(np.array([[0.7, 0.7]]), np.array([0.5]),
                                                np.zeros((1, 2))))  # fmt: skip


def test_a_plan_too_large_for_a_table_of_cells_is_searched_alike() -> None:
    rng = np.random.default_rng(5)
    walls = racks(rng, 30, 30.0)
    x = rng.uniform(0, 30, (300, 2))
    before = step_people(x, np.full(300, 0.2), np.full(300, 1.3), x + 3.0, 0.1, SpeedModel(),
                         walls, compiled=True).positions  # fmt: skip
    walls._first = None  # (as on a plan of more than `MAX_TABLE` cells)
    after = step_people(x, np.full(300, 0.2), np.full(300, 1.3), x + 3.0, 0.1, SpeedModel(),
                        walls, compiled=True).positions  # fmt: skip
    np.testing.assert_array_equal(before, after)
    both(x, walls, None)


def test_many_steps_stay_together_and_out_of_the_walls() -> None:
    rng = np.random.default_rng(11)
    walls = racks(rng, 25, 25.0)
    x = rng.uniform(0, 25, (300, 2))
    who, _, _, dist = walls.near(x)
    x = np.delete(x, who[dist < 0.25], axis=0)  # (no one starts in a wall)
    n = len(x)
    radius, v0 = np.full(n, 0.2), rng.uniform(1.0, 1.6, n)
    target = rng.uniform(0, 25, (n, 2))
    fast = slow = x
    for _ in range(100):
        fast = step_people(fast, radius, v0, target, 0.1, SpeedModel(), walls, compiled=True)
        slow = step_people(slow, radius, v0, target, 0.1, SpeedModel(), walls, compiled=False)
        fast, slow = fast.positions, slow.positions
        who, _, _, dist = walls.near(fast)
        assert (dist >= radius[who] - 1e-9).all()  # (no one in a wall)
    assert np.abs(fast - slow).max() < 1e-3  # (steps of 1e-9 apart, a chaotic crowd: close)


def test_the_rimea_tests_pass_on_the_numpy_path_without_numba() -> None:
    script = (
        "import json\n"
        "from fleetsim.people import kernel, rimea\n"
        "corner, neck = rimea.corner(20), rimea.bottleneck(60)\n"
        "print(json.dumps([kernel.available(), corner.seconds, corner.deepest,\n"
        "                  corner.left_corridor, neck.seconds, neck.crowded, neck.flow]))\n"
    )
    env = {**os.environ, NO_NUMBA.name: "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    available, seconds, deepest, left, neck_s, crowded, flow = json.loads(done.stdout)
    assert available is False  # (the NumPy path ran)
    assert seconds < 45.0 and deepest <= 0.0 and not left
    assert np.isfinite(neck_s) and crowded >= 10 and 0.8 <= flow <= 2.5 and deepest <= 0.0


def test_two_threads_give_the_one_thread_steps_numbers_to_the_last_bit() -> None:
    from fleetsim.people import kernel_two

    rng = np.random.default_rng(21)
    n = kernel_two.TWO_FROM + 1000
    side = float(np.sqrt(n / 1.5))
    x = rng.uniform(0, side, (n, 2))
    walls = racks(rng, 60, side)
    m = 80
    robots = (rng.uniform(0, side, (m, 2)), rng.uniform(0.3, 0.7, m), rng.uniform(-1, 1, (m, 2)))
    model = SpeedModel()
    params = np.array([model.time_gap, model.neighbour_strength, model.neighbour_range,
                       model.wall_strength, model.wall_range, model.robot_strength,
                       model.robot_range, model.reach, 0.5, 1e-6, model.anticipation])  # fmt: skip
    target = x + rng.uniform(-5, 5, (n, 2))
    args = (x, rng.uniform(0.15, 0.25, n), rng.uniform(0.8, 1.8, n), target, 0.1, params,
            walls.segments, *walls.index_arrays(), *robots, kernel.buffers())  # fmt: skip
    one = kernel.step_arrays(*args)
    two = kernel_two.step_in_two(*args)
    assert one is not None
    for a, b in zip(one[:5], two[:5], strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(one[2]) > 0  # (people near robots: the pairs compared too)
