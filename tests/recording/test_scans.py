"""Lidar scans and safety fields in recordings: the chosen robots' scans as Foxglove
`LaserScan`s that decode with only what the file holds, read back as they were made, their
fields as line loops, and shown by the replay."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.reader import make_reader

import fleetsim.recording
from fleetsim import Agent, ConfigError, Pose, SimObject
from fleetsim.recording import record
from fleetsim.recording.replay import Replay

from ..conftest import make_sim


def fleet(sim: object, count: int) -> list[Agent]:
    SimObject.static_boxes([[6.0, 0.0, 0.5]], [[0.2, 8.0, 0.5]], [0.0], sim_core=sim)
    robots = []
    for k in range(count):
        robot = Agent.from_urdf("simple_cube", Pose.from_xyz(0, 1.5 * k - 3, 0), sim_core=sim)
        robot.name = f"amr{k}"
        robot.add_lidar(beams=90, rate=5.0)
        robots.append(robot)
    return robots


def decode(path: Path, topic: str) -> list[tuple[int, object]]:
    """(log time, message) of `topic`, decoded with the file's own descriptor set."""
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        channel = next(c for c in summary.channels.values() if c.topic == topic)
        schema = summary.schemas[channel.schema_id]
        pool = descriptor_pool.DescriptorPool()
        for file in descriptor_pb2.FileDescriptorSet.FromString(schema.data).file:
            pool.Add(file)
        message_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
        return [
            (m.log_time, message_class.FromString(m.data))
            for _s, _c, m in reader.iter_messages(topics=[topic])
        ]


def test_a_few_robots_scans_as_foxglove_laser_scans(tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    with make_sim(timestep=0.1) as sim:
        robots = fleet(sim, 6)
        robots[1].set_goal(Pose.from_xyz(3.0, -1.5, 0), align_orientation=False)
        record(sim, out, rate=10)
        made = []
        for _ in range(20):
            sim.step_once()
            scan = robots[1].lidars[0].scan()
            if not made or made[-1].stamp != scan.stamp:
                made.append(scan)
    with fleetsim.recording.open(out) as recording:
        assert recording.scanned() == ["amr0", "amr1", "amr2", "amr3"]  # the default: four
        kept = list(recording.scans("amr1"))
    assert [s.time for s in kept] == pytest.approx([s.stamp for s in made])  # 5 Hz: 10
    for ours, theirs in zip(made, kept, strict=True):
        np.testing.assert_array_equal(ours.ranges, theirs.ranges)
        assert theirs.pose == pytest.approx(ours.pose)
    np.testing.assert_allclose(kept[-1].world_points(), made[-1].world_points(), atol=1e-5)
    (first_time, first), *_ = decode(out, "/scan/amr1")
    assert type(first).DESCRIPTOR.full_name == "foxglove.LaserScan"
    assert first.frame_id == "world" and first_time == round(made[0].stamp * 1e9)
    assert first.start_angle == pytest.approx(-math.pi) and len(first.ranges) == 90
    assert first.ranges[45] == made[0].ranges[45] == pytest.approx(5.8, abs=0.02)  # the wall
    assert math.isinf(first.ranges[0])  # behind: nothing (REP 117: +inf)


def test_choosing_whose_scans(tmp_path: Path) -> None:
    every = [f"amr{k}" for k in range(5)]
    for choice, expected in ((["amr4", "amr0"], ["amr0", "amr4"]), ("all", every), (0, [])):
        out = tmp_path / f"{choice}.mcap"
        with make_sim(timestep=0.1) as sim:
            fleet(sim, 5)
            record(sim, out, scans=choice)
            sim.step_once()
        with fleetsim.recording.open(out) as recording:
            assert recording.scanned() == expected
    with make_sim(timestep=0.1) as sim:
        fleet(sim, 2)
        with pytest.raises(ConfigError, match="no robot named 'amr9'"):
            record(sim, tmp_path / "bad.mcap", scans=["amr9"])
        with pytest.raises(ConfigError, match="scans: a number"):
            record(sim, tmp_path / "bad.mcap", scans=-1)


def test_fields_are_line_loops_and_the_replay_shows_scans(tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    with make_sim(timestep=0.1) as sim:
        (robot,) = fleet(sim, 1)
        robot.set_safety_fields("auto")
        robot.set_goal(Pose.from_xyz(9.0, -3.0, 0), align_orientation=False)
        record(sim, out, rate=10)
        for _ in range(100):
            sim.step_once()
        assert robot.safety_field_state == "protective"  # (at the wall)
    fields = decode(out, "/fields")
    assert len(fields) == 50  # with each scan
    _, driving = fields[5]
    protective, warning = driving.entities[0].lines  # under way: both fields
    assert protective.color.r == pytest.approx(0.9) and warning.color.g == pytest.approx(0.65)
    assert max(p.x for p in warning.points) > max(p.x for p in protective.points)
    _, last = fields[-1]
    (entity,) = last.entities
    (protective,) = entity.lines  # at rest: the protective field alone, drawn thick (violated)
    assert entity.id == "fields/amr0" and len(protective.points) == 4
    assert protective.thickness == pytest.approx(0.06)
    xs = [p.x for p in protective.points]
    assert max(xs) == pytest.approx(robot.get_pose().position[0] + 0.3, abs=1e-6)
    with fleetsim.recording.open(out) as recording, make_sim() as viewer:
        replay = Replay(recording, viewer)
        played = replay.play(speed=0)
    assert played.frames == 101 and replay.scans_shown == 100  # (a scan from the first step)
    assert replay.fields_shown == 100 and len(replay.fields["amr0"][0]) == 50


def test_the_run_command_records_whose_scans_it_is_told(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    scenario = tmp_path / "lidars.yaml"
    scenario.write_text(
        "name: lidars\n"
        "simulation: {timestep: 0.1, duration: 1}\n"
        "robots:\n"
        "  - {name: amr, model: mobile_robot_lidar, grid: {count: 6, spacing: 2},\n"
        "     safety_fields: {auto: true}}\n"
    )
    out = tmp_path / "run.mcap"
    command = [sys.executable, "-m", "fleetsim", "run", str(scenario), "--record", str(out)]
    done = subprocess.run(
        [*command, "--record-scans", "amr_5,amr_2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with fleetsim.recording.open(out) as recording:
        assert recording.scanned() == ["amr_2", "amr_5"]
        assert len(list(recording.scans("amr_5"))) == 10  # 10 Hz for a simulated second
        assert {robot for _, robot, _ in recording.fields()} == {"amr_2", "amr_5"}
    if shutil.which("xvfb-run") is None:
        return  # (the window: on a virtual screen where there is one)
    window = ["xvfb-run", "-a", "-s", "-screen 0 1024x768x24", sys.executable, "-m", "fleetsim"]
    shown = subprocess.run(
        [*window, "replay", str(out), "--speed", "4"], capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr  # (scans as points, fields as lines)
    assert "replayed 11 frames" in shown.stdout
