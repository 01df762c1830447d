"""Both cores for the largest kernels (`fleetsim.parallel`): the same numbers in halves as in
one piece, errors raised where the work was asked for, the helper's hand-over (watched and
slept), a forked child that works, and the setting that turns it off."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from fleetsim import AgentManager, AgentSpawnParams, GridSpawnParams, Pose, environment, parallel
from fleetsim.errors import ConfigError

from .conftest import make_sim


def test_halves_cover_the_rows_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEETSIM_THREADS", "2")
    assert parallel.halves(10) == [(0, 10)]  # few rows: one piece
    assert parallel.halves(50_001) == [(0, 25_000), (25_000, 50_001)]
    assert parallel.halves(9, min_rows=2) == [(0, 4), (4, 9)]
    monkeypatch.setenv("FLEETSIM_THREADS", "1")
    assert parallel.halves(50_001) == [(0, 50_001)]
    monkeypatch.setenv("FLEETSIM_THREADS", "two")
    with pytest.raises(ConfigError, match="FLEETSIM_THREADS='two': expected a whole number"):
        environment.threads()


def test_tasks_run_on_two_threads_and_errors_come_back() -> None:
    names = parallel.run([lambda: threading.current_thread().name] * 2)
    assert names[0] == threading.current_thread().name and names[1].startswith("fleetsim-half")
    done: list[int] = []

    def fails() -> int:
        raise ValueError("the second half failed")

    with pytest.raises(ValueError, match="second half"):
        parallel.run([lambda: done.append(1) or 1, fails])
    assert done == [1]  # the first half ran to its end

    def first_fails() -> int:
        raise KeyError("this thread's half failed")

    with pytest.raises(KeyError, match="this thread"):  # (both failed: this thread's first)
        parallel.run([first_fails, fails])
    assert parallel.run([lambda: 1, lambda: 2]) == [1, 2]  # (the helper serves on)
    nested = parallel.run([lambda: 0, lambda: parallel.run([lambda: 1, lambda: 2])])
    assert nested == [0, [1, 2]]  # (the helper asking for halves runs them itself)


def test_the_helper_serves_long_tasks_after_sleeping_and_two_callers_at_once() -> None:
    """A task longer than the watch (the caller falls back to sleeping), a request after the
    helper fell asleep (idle longer than its watch), and two threads asking at once (one gets
    the helper, the other runs its tasks itself): every result in its place."""
    import time

    def slow(value: int) -> int:
        time.sleep(0.03)  # (lets go of the GIL, like a kernel)
        return value

    assert parallel.run([lambda: 1, lambda: slow(2)]) == [1, 2]
    time.sleep(0.05)  # the helper sleeps now
    assert parallel.run([lambda: 3, lambda: 4, lambda: 5]) == [3, 4, 5]
    start = threading.Barrier(2)
    results: dict[int, list[int]] = {}

    def caller(k: int) -> None:
        start.wait()
        results[k] = [r for _ in range(20) for r in parallel.run([lambda: k, lambda: slow(-k)])]

    threads = [threading.Thread(target=caller, args=(k,)) for k in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {k: [k, -k] * 20 for k in (1, 2)}


def test_without_numba_the_helper_sleeps_and_wakes() -> None:
    """With Numba turned off (`FLEETSIM_NO_NUMBA`), the hand-over sleeps on a condition:
    results, errors and a request after an idle spell still come back."""
    script = (
        "import sys, time\n"
        "from fleetsim import parallel\n"
        "assert parallel.run([lambda: 1, lambda: 2]) == [1, 2]\n"
        "assert parallel._helper()._spin is None\n"
        "time.sleep(0.05)\n"
        "assert parallel.run([lambda: 3, lambda: time.sleep(0.02) or 4]) == [3, 4]\n"
        "try:\n"
        "    parallel.run([lambda: 1, lambda: 1 / 0])\n"
        "except ZeroDivisionError:\n"
        "    sys.exit(0)\n"
        "sys.exit(3)\n"
    )
    env = {**os.environ, "FLEETSIM_NO_NUMBA": "1", "FLEETSIM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", script], timeout=60, env=env)
    assert done.returncode == 0


def test_a_flag_watched_without_the_gil() -> None:
    """`fleetsim.spin`: a watch sees a flag another thread raises (and gives up on one that
    stays down), and a published count is there for the next reader."""
    pytest.importorskip("numba")
    from fleetsim import spin

    flags = np.zeros(3, dtype=np.int64)
    assert not spin.watch(flags, 0, 1, 1000)
    timer = threading.Timer(0.01, lambda: flags.__setitem__(0, 5))
    timer.start()
    assert spin.watch(flags, 0, 5, 1 << 40)  # (returns once the timer raised it)
    timer.join()
    assert not spin.publish_then_watch(flags, 1, 7, 2, 1, 100)
    assert flags.tolist() == [5, 7, 0]


@pytest.mark.parametrize("motion", ["omnidirectional", "differential"])
def test_a_fleet_stepped_in_halves_is_the_same_as_in_one_piece(
    motion: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dense fleet driving (boxes 0.4 m, 0.6 m apart) with its drive, broadphase and narrow
    phase in halves on two threads and in one piece: the same poses to the last bit and the
    same contacts at every step."""
    pytest.importorskip("numba")
    from fleetsim.collision import kernels

    monkeypatch.setattr(kernels, "MIN_BODIES", 2)

    def run(threads: str) -> tuple[np.ndarray, list[np.ndarray]]:
        monkeypatch.setenv("FLEETSIM_THREADS", threads)
        with make_sim(timestep=0.1) as sim:
            robots = AgentManager(sim).spawn_agents_grid(
                400,
                GridSpawnParams(x_max=12, y_max=12, spacing=0.6),
                AgentSpawnParams(urdf_path="simple_cube", motion_mode=motion),
            )
            rng = np.random.default_rng(3)
            for robot, (x, y) in zip(robots, rng.uniform(0, 12, (400, 2)), strict=True):
                robot.set_goal(Pose.from_xyz(float(x), float(y), 0.0), align_orientation=False)
            contacts = []
            for _ in range(30):
                sim.step_once()
                contacts.append(sim.collisions.active.copy())
            return sim.world.bodies["pos"].copy(), contacts

    monkeypatch.setattr(parallel, "MIN_ROWS", 64)  # (halves from 64 rows or pairs)
    monkeypatch.setattr(parallel, "ROW_KERNEL_ROWS", 64)
    split: list[int] = []
    halves = parallel.halves

    def counted(n: int, *more: int) -> list[tuple[int, int]]:
        parts = halves(n, *more)
        split.extend([n] if len(parts) == 2 else [])
        return parts

    monkeypatch.setattr(parallel, "halves", counted)
    two = run("2")
    assert len(split) > 100 and max(split) >= 400  # (the drive, the boxes, the grid, pairs)
    one = run("1")
    assert np.array_equal(two[0], one[0])
    assert all(np.array_equal(a, b) for a, b in zip(two[1], one[1], strict=True))
    assert sum(len(c) for c in two[1]) > 1000  # a crowd: many contacts


def test_a_forked_child_gets_a_helper_of_its_own() -> None:
    """The parent's helper thread does not exist in a forked child: the child's first split
    makes its own (it would wait for ever on the parent's)."""
    script = (
        "import os, signal, sys\n"
        "from fleetsim import parallel\n"
        "parallel.run([lambda: 1, lambda: 2])\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    signal.alarm(30)  # (a child that waits for ever ends)\n"
        "    os._exit(0 if parallel.run([lambda: 1, lambda: 2]) == [1, 2] else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=60, env={**os.environ})
    assert done.returncode == 0


def test_a_sweep_worker_keeps_to_one_thread() -> None:
    """A sweep's (or a fuzz's) workers share the cores with each other: each keeps to one
    thread, whatever `FLEETSIM_THREADS` says."""
    script = (
        "import sys\n"
        "from fleetsim import parallel\n"
        "from fleetsim.sweep import worker\n"
        "before = len(parallel.halves(50_000))\n"
        "worker.quiet()\n"
        "sys.exit(0 if (before, len(parallel.halves(50_000))) == (2, 1) else 3)\n"
    )
    env = {**os.environ, "FLEETSIM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", script], timeout=120, env=env)
    assert done.returncode == 0
