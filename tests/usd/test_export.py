"""Recordings written back as stages: read back with pxr, every sampled pose where the
simulation had it, OpenUSD's own validators content, the command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    SimObject,
    SimulationParams,
)
from fleetsim.errors import ConfigError
from fleetsim.geometry import quat
from fleetsim.recording.usd_export import export_usd

from ..conftest import fleetsim
from .stages import Usd, UsdGeom, UsdValidation

pytest.importorskip("mcap")


def recorded_run(path: Path) -> tuple[dict[int, dict[str, Pose]], str]:
    """Twelve robots driving, one added after 5 s and one removed at 8 s, a few static boxes,
    recorded at 10 frames a second; returns the robots' poses by step, and who was removed."""
    poses: dict[int, dict[str, Pose]] = {}
    with MultiRobotSimulationCore(SimulationParams(timestep=0.05, target_rtf=0)) as sim:
        SimObject.static_boxes(
            [[5, 5, 0.5], [9, 1, 1]], [[1, 0.5, 0.5], [0.2, 2, 1]], [0.3, 0], sim_core=sim
        )
        manager = AgentManager(sim)
        robots = manager.spawn_agents_grid(
            12,
            GridSpawnParams(x_max=6, y_max=4, spacing=2.0),
            AgentSpawnParams(urdf_path="simple_cube"),
        )
        for k, robot in enumerate(robots):
            robot.set_goal(Pose.from_yaw(8.0 - k % 4, 6.0 - k // 4, 0.0, 0.4 * k))
        recorder = sim.record(path, rate=10)
        late = None
        for step in range(200):
            if step == 100:
                late = manager.spawn_agents_grid(
                    1, GridSpawnParams(x_min=12, x_max=13, y_min=12, y_max=13, spacing=1.0),
                    AgentSpawnParams(urdf_path="simple_cube"),
                )[0]  # fmt: skip
            if step == 160:
                robots[0].remove()
            sim.step_once()
            if step % 2 == 1:  # a frame every 0.1 s
                alive = [*robots[int(step >= 160) :], *([late] if late else [])]
                poses[step] = {r.name: r.get_pose() for r in alive}
        recorder.close()
        assert late is not None
    return poses, robots[0].name


def test_a_recording_exported_plays_the_poses_the_run_had(tmp_path: Path) -> None:
    record = tmp_path / "run.mcap"
    poses, removed = recorded_run(record)
    done = export_usd(record, tmp_path / "run.usda", rate=10)
    assert (done.robots, done.static_boxes) == (13, 3) and done.samples >= 100  # (the floor)
    stage = Usd.Stage.Open(str(tmp_path / "run.usda"))
    assert stage.GetTimeCodesPerSecond() == 10 and UsdGeom.GetStageUpAxis(stage) == "Z"
    robots = UsdGeom.PointInstancer(stage.GetPrimAtPath("/World/Robots"))
    names = list(robots.GetPrim().GetAttribute("fleetsim:names").Get())
    assert len(names) == 13 and names[0] == removed
    positions, orientations = robots.GetPositionsAttr(), robots.GetOrientationsAttr()
    hidden = robots.GetInvisibleIdsAttr()
    checked = 0
    for step, alive in poses.items():
        code = round((step + 1) * 0.05 * 10)  # the time code of the frame after this step
        if code >= done.samples:
            continue
        xyz = np.array(positions.Get(code))
        turn = orientations.Get(code)
        gone = set(hidden.Get(code))
        for name, pose in alive.items():
            k = names.index(name)
            assert k not in gone
            np.testing.assert_allclose(xyz[k], pose.position, atol=1e-5)
            q = turn[k]
            yaw = 2 * np.arctan2(q.GetImaginary()[2], q.GetReal())
            want = quat.yaw_of(np.asarray(pose.orientation))
            assert abs((yaw - want + np.pi) % (2 * np.pi) - np.pi) < 2e-3
            checked += 1
    assert checked > 1000
    late = len(names) - 1  # (seen last)
    assert late in set(hidden.Get(0)) and late not in set(hidden.Get(done.samples - 1))
    assert 0 in set(hidden.Get(done.samples - 1))  # removed at 8 s
    static = UsdGeom.PointInstancer(stage.GetPrimAtPath("/World/Static"))
    assert len(static.GetPositionsAttr().Get()) == 3
    cache = UsdGeom.BBoxCache(Usd.TimeCode.Default(), ["default"])
    bound = cache.ComputePointInstanceWorldBound(static, 2).ComputeAlignedRange()
    np.testing.assert_allclose(bound.GetMin(), (8.8, -1, 0), atol=1e-3)
    np.testing.assert_allclose(bound.GetMax(), (9.2, 3, 2), atol=1e-3)
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    assert list(UsdValidation.ValidationContext(validators).Validate(stage)) == []


def test_fleetsim_usd_export_and_info(tmp_path: Path) -> None:
    record = tmp_path / "twin.mcap"
    ran = fleetsim("run", "twin", "--duration", "30", "--record", str(record))
    assert ran.returncode == 0, ran.stderr
    done = fleetsim("usd", "export", str(record), str(tmp_path / "twin.usdc"))
    assert done.returncode == 0, done.stderr
    assert (
        "10 robots, 301 time samples (30.0 simulated s at 10 a second), 248 static" in done.stdout
    )
    stage = Usd.Stage.Open(str(tmp_path / "twin.usdc"))
    assert stage.GetEndTimeCode() == 300
    bad = fleetsim("usd", "export", str(record), str(tmp_path / "twin.obj"))
    assert bad.returncode == 2 and "write a .usd, .usda or .usdc file" in bad.stderr
    info = fleetsim("usd", "info", str(tmp_path / "twin.usdc"))
    assert info.returncode == 0 and "boxes (metersPerUnit 1, up axis Z)" in info.stdout


def test_export_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"rate: expected samples a second > 0"):
        export_usd(tmp_path / "none.mcap", tmp_path / "x.usda", rate=0)
    with pytest.raises(ConfigError, match=r"none\.mcap"):
        export_usd(tmp_path / "none.mcap", tmp_path / "x.usda")
