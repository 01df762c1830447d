"""Benchmark: OpenUSD twins in and runs out (`fleetsim.usd`, `fleetsim usd export`).

- Loading: a warehouse twin of 100,000 racks from one point instancer (each a 12-triangle box
  mesh; 20 times the peer's 5,000-instance limit), 1,000 meshes of 10,082 triangles each
  (ceilings, machines), centimetres and Y up as twin tools write them, and a marked navigation
  graph; `fleetsim run` on a scenario naming it (10 robots, the fleet manager) for one step:
  the wall time from the command to its first simulated step (target: under 10 s; the
  command's own report of its build beside it) and the command's peak memory.
- Export: 1,000 robots driving for 10 simulated minutes, recorded at 10 frames a second;
  `fleetsim usd export` of the recording at 10 samples a second (target: under 30 s).

The stages are made once under ~/.cache/fleetsim-bench (with pxr, as tools/make_twin.py
makes the bundled twin).

    python benchmarks/usd.py [--racks 100000] [--meshes 1000] [--json results/usd.json]
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json
from pxr import Gf, Sdf, Usd, UsdGeom, Vt

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    SimulationParams,
)
from fleetsim.recording.usd_export import export_usd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from make_twin import box_mesh

CACHE = Path.home() / ".cache" / "fleetsim-bench" / "usd"
CM = 100.0


def grid_mesh(stage: Usd.Stage, path: str, side: int, size: float, height: float) -> None:
    """A mesh of (side - 1)^2 * 2 + 2 * ... triangles: a wavy roof over a square (a machine's
    casing), `size` cm across, `height` cm tall."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    u = np.linspace(0, size, side)
    x, z = np.meshgrid(u, u)
    y = height * (0.8 + 0.2 * np.sin(x / size * 6) * np.cos(z / size * 6))
    points = np.stack((x, y, z), -1).reshape(-1, 3).astype(np.float32)
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
    k = np.arange(side * side).reshape(side, side)
    a, b, c, d = k[:-1, :-1].ravel(), k[:-1, 1:].ravel(), k[1:, 1:].ravel(), k[1:, :-1].ravel()
    tris = np.stack((np.stack((a, b, c), 1), np.stack((a, c, d), 1)), 1).reshape(-1, 3)
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(tris), 3, np.int32)))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(tris.ravel().astype(np.int32)))


def big_twin(racks: int, meshes: int) -> Path:
    """The large twin (made once): racks in rows 3 m apart with 2 m aisles, machines beside."""
    out = CACHE / f"twin_{racks}_{meshes}.usdc"
    if out.exists():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    stage = Usd.Stage.CreateNew(str(out))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/Twin").GetPrim())
    side = math.ceil(math.sqrt(racks))
    instancer = UsdGeom.PointInstancer.Define(stage, "/Twin/Racks")
    box_mesh(stage, "/Twin/Racks/Prototypes/Rack", (-50, 0, -100), (50, 200, 100))
    instancer.CreatePrototypesRel().SetTargets(["/Twin/Racks/Prototypes/Rack"])
    instancer.CreateProtoIndicesAttr(Vt.IntArray.FromNumpy(np.zeros(racks, np.int32)))
    k = np.arange(racks)
    xy = np.stack((3.0 * (k % side), 2.5 * (k // side)), 1) * CM  # fleetsim x, y in cm
    where = np.stack((xy[:, 0] + 150, np.zeros(racks), -(xy[:, 1] + 150)), 1).astype(np.float32)
    instancer.CreatePositionsAttr(Vt.Vec3fArray.FromNumpy(where))
    for m in range(meshes):  # machines along the south side, 71 x 71 points: 10,082 triangles
        xform = UsdGeom.Xform.Define(stage, f"/Twin/Machines/M{m}")
        xform.AddTranslateOp().Set(Gf.Vec3d(m * 400.0, 0, 600))
        grid_mesh(stage, f"/Twin/Machines/M{m}/Casing", 72, 300.0, 150.0)
    for name, (x, y) in {"a": (0.0, -2.0), "b": (30.0, -2.0), "c": (30.0, -8.0)}.items():
        prim = UsdGeom.Xform.Define(stage, f"/Twin/Nav/{name}").GetPrim()
        UsdGeom.Xformable(prim).AddTranslateOp().Set(Gf.Vec3d(x * CM, 0, -y * CM))
        kind = {"a": "parking", "b": "pickup", "c": "dropoff"}[name]
        prim.CreateAttribute("fleetsim:node", Sdf.ValueTypeNames.String).Set(kind)
    for here, there in (("a", "b"), ("b", "c")):
        stage.GetPrimAtPath(f"/Twin/Nav/{here}").CreateRelationship("fleetsim:lanes").AddTarget(
            f"/Twin/Nav/{there}"
        )
    stage.GetRootLayer().Save()
    return out


def loading(racks: int, meshes: int) -> dict[str, Any]:
    """`fleetsim run` on a scenario naming the big twin, one step: wall time and peak memory."""
    twin = big_twin(racks, meshes)
    scenario = CACHE / f"twin_{racks}_{meshes}.yaml"
    scenario.write_text(
        "simulation: {timestep: 0.1, target_rtf: 0, duration: 0.1}\n"
        f"environment: {{usd: {twin.name}}}\n"
        f"site: {{file: {twin.name}}}\n"
        "robots: [{name: amr, model: mobile_robot, start: {random: 3}}]\n"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", str(scenario)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    building = re.search(r"building ([0-9.]+) s", done.stdout)
    return {"case": "load", "racks": racks, "meshes": meshes, "seconds": wall, "peak_mb": peak,
            "build_s": float(building[1]) if building else math.nan}  # fmt: skip


def export(robots: int, seconds: float) -> dict[str, Any]:
    """A run of `robots` driving for `seconds`, recorded at 10 Hz, exported at 10 samples a
    second: the export's wall time."""
    record = CACHE / f"run_{robots}_{int(seconds)}.mcap"
    if not record.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0, seed=0)) as sim:
            side = math.ceil(math.sqrt(robots)) * 2.0
            manager = AgentManager(sim)
            fleet = manager.spawn_agents_grid(
                robots, GridSpawnParams(x_max=side, y_max=side, spacing=2.0),
                AgentSpawnParams(urdf_path="simple_cube"),
            )  # fmt: skip
            rng = np.random.default_rng(0)
            recorder = sim.record(record, rate=10)
            for step in range(int(seconds / 0.1)):
                if step % 100 == 0:
                    for robot, (x, y) in zip(fleet, rng.uniform(0, side, (robots, 2)), strict=True):
                        robot.set_goal(Pose.from_xyz(float(x), float(y), 0.0))
                sim.step_once()
            recorder.close()
    started = time.perf_counter()
    done = export_usd(record, CACHE / "run.usdc", rate=10)
    wall = time.perf_counter() - started
    return {"case": "export", "robots": done.robots, "samples": done.samples, "seconds": wall,
            "mb": (CACHE / "run.usdc").stat().st_size / 1e6}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racks", type=int, default=100_000)
    parser.add_argument("--meshes", type=int, default=1000)
    parser.add_argument("--robots", type=int, default=1000)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = loading(args.racks, args.meshes)
    print(f"load: {args.racks:,} instanced racks + {args.meshes:,} meshes of 10,082 triangles: "
          f"{load['seconds']:.1f} s from the command to its first step (< 10 s), peak "
          f"{load['peak_mb']:.0f} MB; the build, as its summary says: "
          f"{load['build_s']:.1f} s")  # fmt: skip
    out = export(args.robots, args.minutes * 60)
    print(f"export: {out['robots']:,} robots, {out['samples']:,} samples: {out['seconds']:.1f} s "
          f"(< 30 s), {out['mb']:.0f} MB")  # fmt: skip
    if args.json:
        write_json(args.json, [load, out])


if __name__ == "__main__":
    main()
