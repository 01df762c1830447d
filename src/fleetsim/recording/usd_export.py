"""A recording written back as an OpenUSD stage that usdview or Omniverse plays
(`fleetsim usd export run.mcap run.usdc`).

The stage is in metres with Z up, `timeCodesPerSecond` the sampling rate (10 by default), time
code k at simulated second k / rate. `/World/Static` is the recorded static world (the floor
included) as one point instancer of a unit cube, placed, turned and scaled per box.
`/World/Robots` is every robot the recording saw as a point instancer whose `positions` and
`orientations` are time-sampled arrays (one sample per time code for the whole fleet: a
10-minute run of 1,000 robots is 6,000 samples of two arrays, written in seconds where a prim
per robot would take 12 million samples); its `ids` are the robots' indices, `fleetsim:names`
their names in that order, and `invisibleIds` hide robots before they appear and after they
go. Each robot is drawn as a box of `robot_size` (a recording keeps poses, not shapes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.geometry import quat
from fleetsim.recording.reader import Recording
from fleetsim.usd.stage import SUFFIXES, pxr_modules

ROBOT_SIZE = (0.6, 0.5, 0.4)  # m: the box each robot is drawn as


@dataclass
class UsdExport:
    """What `export_usd` wrote: the stage, its robots, time samples and simulated seconds."""

    path: Path
    robots: int
    samples: int
    seconds: float
    static_boxes: int


def export_usd(
    recording: str | Path,
    out: str | Path,
    *,
    rate: float = 10.0,
    robot_size: tuple[float, float, float] = ROBOT_SIZE,
) -> UsdExport:
    """Write the recording at `recording` as a stage at `out` (.usd, .usda, .usdc), its robots'
    poses sampled `rate` times a simulated second (each sample the last frame recorded at or
    before it)."""
    usd, geom = pxr_modules()
    from pxr import Sdf, Vt

    target = Path(out)
    if target.suffix.lower() not in SUFFIXES[:3]:
        raise ConfigError(f"{target}: write a .usd, .usda or .usdc file")
    if not (np.isfinite(rate) and rate > 0):
        raise ConfigError(f"rate: expected samples a second > 0, got {rate!r}")
    with Recording(recording) as rec:
        names, xyz, yaw, seen = _sampled(rec, rate)
        centres, sizes, yaws = rec.static_boxes()
    stage = usd.Stage.CreateNew(str(target))
    geom.SetStageUpAxis(stage, geom.Tokens.z)
    geom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(rate)
    stage.SetFramesPerSecond(rate)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(max(len(xyz) - 1, 0))
    world = geom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    if len(centres):
        static = _cubes(stage, geom, "/World/Static", (1.0, 1.0, 1.0))
        static.CreatePositionsAttr(Vt.Vec3fArray.FromNumpy(centres.astype(np.float32)))
        static.CreateScalesAttr(Vt.Vec3fArray.FromNumpy(sizes.astype(np.float32)))
        static.CreateOrientationsAttr(
            Vt.QuathArray.FromNumpy(quat.from_yaw(yaws).astype(np.float16))
        )
        static.CreateProtoIndicesAttr(Vt.IntArray.FromNumpy(np.zeros(len(centres), np.int32)))
    robots = _cubes(stage, geom, "/World/Robots", robot_size)
    robots.CreateProtoIndicesAttr(Vt.IntArray.FromNumpy(np.zeros(len(names), np.int32)))
    robots.CreateIdsAttr(Vt.Int64Array.FromNumpy(np.arange(len(names), dtype=np.int64)))
    robots.GetPrim().CreateAttribute("fleetsim:names", Sdf.ValueTypeNames.StringArray).Set(names)
    positions, orientations = robots.CreatePositionsAttr(), robots.CreateOrientationsAttr()
    hidden, shown = robots.CreateInvisibleIdsAttr(), None
    for k in range(len(xyz)):
        positions.Set(Vt.Vec3fArray.FromNumpy(xyz[k]), k)
        orientations.Set(Vt.QuathArray.FromNumpy(quat.from_yaw(yaw[k]).astype(np.float16)), k)
        gone = np.flatnonzero(~seen[k])
        if shown is None or not np.array_equal(gone, shown):
            hidden.Set(Vt.Int64Array.FromNumpy(gone.astype(np.int64)), k)
            shown = gone
    robots.GetPrim().SetMetadata("comment", "fleetsim robots: ids index fleetsim:names")
    stage.GetRootLayer().Save()
    return UsdExport(target, len(names), len(xyz), (len(xyz) - 1) / rate, len(centres))


def _sampled(rec: Recording, rate: float) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(names, positions (S, R, 3) float32, yaws (S, R), present (S, R)) at times k / rate:
    each sample from the last frame at or before it (a robot's last pose held while it is
    absent, marked not present)."""
    index: dict[str, int] = {}
    frames = []
    for frame in rec.frames():
        ids = np.array([index.setdefault(n, len(index)) for n in frame.names], dtype=np.int64)
        frames.append((frame.time, ids, frame.xyz.astype(np.float32), frame.yaw))
    if not frames:
        raise ConfigError(f"{rec.path}: no recorded frames of the fleet to export")
    end = frames[-1][0]
    count = int(np.floor(end * rate + 1e-9)) + 1
    robots = len(index)
    xyz = np.zeros((count, robots, 3), dtype=np.float32)
    yaw = np.zeros((count, robots))
    seen = np.zeros((count, robots), dtype=bool)
    times = np.array([f[0] for f in frames])
    pick = np.searchsorted(times, np.arange(count) / rate + 1e-9, side="right") - 1
    last_xyz, last_yaw = np.zeros((robots, 3), np.float32), np.zeros(robots)
    for k, f in enumerate(pick.tolist()):
        if f >= 0:
            _, ids, points, yaws = frames[f]
            last_xyz[ids], last_yaw[ids] = points, yaws
            seen[k, ids] = True
        xyz[k], yaw[k] = last_xyz, last_yaw
    return list(index), xyz, yaw, seen


def _cubes(stage: Any, geom: Any, path: str, size: tuple[float, float, float]) -> Any:
    """A point instancer of one box prototype of `size` (a unit cube scaled)."""
    instancer = geom.PointInstancer.Define(stage, path)
    cube = geom.Cube.Define(stage, f"{path}/Prototypes/Box")
    cube.CreateSizeAttr(1.0)
    cube.AddScaleOp().Set(tuple(float(s) for s in size))
    instancer.CreatePrototypesRel().SetTargets([cube.GetPath()])
    return instancer
