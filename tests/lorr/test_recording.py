"""A kit-mode run recorded to MCAP reads back as fleetsim's recordings do: one frame a tick
with every robot where the loop has it (part-way moves and turns included), the map's
obstacles, the errands as they change, and the kit's events."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from fleetsim.lorr.kit import KitRun, KitTiming
from fleetsim.lorr.problem import load_problem
from fleetsim.lorr.recording import KitRecorder
from fleetsim.recording import schemas
from fleetsim.recording.reader import Recording

from .kit_helpers import GO_ENTRIES, LORR, entries_from


def test_a_recorded_run_reads_back(tmp_path: Path) -> None:
    problem = load_problem(LORR / "problems" / "maze.domain" / "maze-example_40-delay.json")
    run = KitRun(problem, entries_from(GO_ENTRIES), KitTiming(ticks=61))
    recorder = KitRecorder(run, tmp_path / "run.mcap")
    seen: list[tuple[np.ndarray, ...]] = []

    def frame(r: KitRun) -> None:
        recorder.frame()
        seen.append((r.location.copy(), r.orientation.copy(), r.count.copy(), r.moving.copy()))

    try:
        run.run(after_tick=frame)
    finally:
        recorder.close()
    with Recording(tmp_path / "run.mcap") as rec:
        frames = list(rec.frames())
        events = rec.events()
        scenes = [data for _t, _time, data in rec.messages("/scene")]
    assert len(frames) == 61 and frames[-1].time == 6.1  # a frame a tick of 0.1 s
    assert frames[0].names == [f"a{i}" for i in range(40)]
    partway = 0
    for got, (loc, ori, cnt, mov) in zip(frames, seen, strict=True):
        rows, cols = np.divmod(loc, problem.cols)
        x, y = cols + 0.5, -(rows + 0.5)
        step = np.where(mov, cnt / 3, 0.0)
        x = x + step * np.array([1, 0, -1, 0])[ori]
        y = y + step * np.array([0, -1, 0, 1])[ori]
        assert np.allclose(got.xyz[:, 0], x, atol=1e-5) and np.allclose(got.xyz[:, 1], y)
        partway += int(mov.sum())
        still = cnt == 0
        yaw = np.array([0.0, -math.pi / 2, math.pi, math.pi / 2])[ori]
        assert np.allclose(np.cos(got.yaw[still] - yaw[still]), 1.0, atol=1e-5)
    assert partway > 0  # robots were caught part-way along an edge
    assert [(e["robot"], e["task"]) for e in events] == [
        (f"a{robot}", task) for _t, robot, task, _d in run.tasks.events
    ]
    update = schemas.foxglove("SceneUpdate")()
    update.ParseFromString(scenes[0])
    walls = update.entities[0].cubes
    runs = sum(
        len(np.flatnonzero(np.diff(np.r_[0, row, 0]))) // 2
        for row in problem.blocked.reshape(problem.rows, problem.cols)
    )
    assert len(walls) == 1 + runs  # the floor, then the obstacles merged along rows
    assert len(scenes) >= 2  # the errands, as they changed


def test_the_command_records(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "lorr",
            "run",
            "warehouse_small",
            "-s",
            "100",
            "--deterministic",
            "--no-progress",
            "--record",
            "run.mcap",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with Recording(tmp_path / "run.mcap") as rec:
        assert sum(1 for _ in rec.frames()) == 100
        assert rec.metadata["problem"].endswith("warehouse_small.json")
    out = json.loads((tmp_path / "output.json").read_text())
    assert out["teamSize"] == 60
    replayed = subprocess.run(
        [sys.executable, "-m", "fleetsim", "replay", "run.mcap", "--headless", "--speed", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert replayed.returncode == 0 and "replayed 100 frames" in replayed.stdout, replayed.stderr
