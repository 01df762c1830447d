"""Continuous mode: the entries' plans on fleetsim's robots, through an executor that keeps
the plan's order of passing at every cell: no collision, no deadlock, delays or not; the
planner sees the kit's environments; errands and tasks count as in kit mode."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fleetsim.errors import ConfigError
from fleetsim.lorr.continuous import ContinuousRun, ContinuousSettings
from fleetsim.lorr.entries import FILES
from fleetsim.lorr.examples import problem_path
from fleetsim.lorr.kit import Entries, KitTiming
from fleetsim.lorr.mapf import hosting, load_entry
from fleetsim.lorr.problem import load_problem
from fleetsim.lorr.summary import stalled

from .kit_helpers import CORRIDOR_ENTRIES, write_problem


def _defaults() -> Entries:
    with hosting():
        return Entries(*(load_entry(FILES[k], k) for k in ("planner", "scheduler", "executor")))


def test_robots_carry_the_plans_out_without_meeting() -> None:
    problem = load_problem(problem_path("warehouse_small"))
    with ContinuousRun(problem, _defaults(), KitTiming(ticks=600)) as run:
        seen: list[float] = []
        cells: dict[int, np.ndarray] = {}

        def closest(r: ContinuousRun) -> None:
            xy, _ = r.frame_poses()
            gaps = np.linalg.norm(xy[:, None] - xy[None], axis=2) + np.eye(r.team) * 1e9
            seen.append(float(gaps.min()))
            cells[r.t] = r.location.copy()

        run.run(after_tick=closest)
        assert run.collisions == 0 and min(seen) >= 0.5  # half a cell apart at the closest
        assert run.finished > 0 and len(run.tasks.events) >= 20
        assert stalled(run, window=400) == []  # long waits in a crowd, but no deadlock
        xy, _ = run.frame_poses()  # idle robots stand on their cell
        idle = run.segment < 0
        rows, cols = np.divmod(run.location, problem.cols)
        assert np.allclose(xy[idle, 0], cols[idle] + 0.5, atol=0.02)
        assert np.allclose(xy[idle, 1], -(rows[idle] + 0.5), atol=0.02)
        for tick, robot, task, done in run.tasks.events:  # each errand done where it is
            assert cells[tick][robot] == run.tasks.all_tasks[task].locations[done - 1]


def test_delays_hold_robots_up_but_never_cause_a_meeting(tmp_path: Path) -> None:
    delay = {"pDelay": 0.05, "minDelay": 5, "maxDelay": 30, "seed": 3}
    problem = load_problem(
        write_problem(
            tmp_path, ["." * 12] * 3, [0, 11, 24, 35], [[11, 24], [0, 35], [13, 22]], delay=delay
        )
    )
    with ContinuousRun(problem, _defaults(), KitTiming(ticks=800)) as run:
        run.run()
        assert run.delays is not None and sum(map(len, run.delays.intervals)) >= 10
        assert run.collisions == 0 and run.finished >= 4
        assert stalled(run, window=300) == []


def test_settings_are_checked_and_the_planner_sees_the_kits_fields(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_linear_vel must be a number > 0"):
        ContinuousSettings(max_linear_vel=0).check()
    problem = load_problem(write_problem(tmp_path, ["." * 8], [0], [[5]]))
    entries = CORRIDOR_ENTRIES()
    with ContinuousRun(
        problem, entries, KitTiming(ticks=120), ContinuousSettings(cell_m=2.0, max_linear_vel=2.0)
    ) as run:
        run.run()
        assert run.finished >= 1 and run.tasks.events[0][1:] == (0, 0, 1)  # (then again)
        xy, _ = run.frame_poses()
        assert abs(xy[0, 0] - 2.0 * 5.5) < 0.05  # cells 2 m wide: the errand's centre
    seen = entries.planner.seen
    assert seen[0]["system"] == 0 and seen[-1]["system"] == 5  # robots' own cells
    assert any(s["staged"] for s in seen)  # what it has left to do, as the kit shows it


def test_the_command_compares_with_kit_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "lorr",
            "run",
            "warehouse_small",
            "--mode",
            "continuous",
            "--compare",
            "-s",
            "300",
            "--deterministic",
            "--no-progress",
            "--results",
            "r.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=None,
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "continuous mode" in text and "kit mode, same input and seeds: tasks finished" in text
    assert "(not used in continuous mode)" in text and not (tmp_path / "output.json").exists()
    row = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert row["mode"] == "continuous" and row["collisions"] == 0


def test_fleetsims_faults_hold_robots_and_the_rest_wait_their_turn() -> None:
    from fleetsim.faults import FaultPlan, RobotFaults

    plan = FaultPlan(robots=(RobotFaults("breakdown", at=(("a0", 2.0),), duration=(30.0, 30.0)),))
    problem = load_problem(problem_path("warehouse_small"))
    poses: dict[int, np.ndarray] = {}
    with ContinuousRun(problem, _defaults(), KitTiming(ticks=500), faults=plan) as run:
        run.run(after_tick=lambda r: poses.__setitem__(r.t, r.frame_poses()[0][0].copy()))
        assert run.faults is not None
        kinds = [(row["kind"], row["target"]) for row in run.faults.rows()]
        assert kinds == [("breakdown", "a0")]
        assert run.collisions == 0 and run.finished > 0
    tick = run.settings.seconds_a_tick  # (simulated seconds a tick)
    held = [poses[t] for t in range(math.ceil(2.8 / tick), int(31.7 / tick))]  # broken down
    assert len(held) > 20
    assert max(float(np.linalg.norm(p - held[0])) for p in held) < 1e-9
    moved = max(float(np.linalg.norm(poses[t] - held[0])) for t in range(int(33 / tick), 501))
    assert moved > 0.5  # repaired: on its way again


def test_robots_at_fleet_speed_finish_at_least_half_of_kit_modes_tasks() -> None:
    """A tick is the time a robot at top speed crosses a cell (as a kit robot does in one): at
    equal ticks, continuous mode's robots (accelerating, turning in place) finish at least half
    of kit mode's tasks, with no collision (it was a tenth: a tick was 0.1 s of driving)."""
    from fleetsim.lorr.kit import KitRun

    problem = load_problem(problem_path("warehouse_small"))
    timing = KitTiming(ticks=1000, deterministic=True)
    with ContinuousRun(problem, _defaults(), timing) as run:
        assert run.settings.seconds_a_tick == pytest.approx(1.0 / 1.5)
        run.run()
        continuous, collisions = run.finished, run.collisions
    kit = KitRun(problem, _defaults(), timing).run().finished
    assert collisions == 0 and kit > 0
    assert continuous >= 0.5 * kit, (continuous, kit)
