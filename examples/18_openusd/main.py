"""A digital twin of your own, from OpenUSD and back (needs `pip install "fleetsim[usd]"`).

Writes a small stage with pxr as twin tools do (centimetres, Y up, a point instancer of 12
racks, four places marked `fleetsim:node` with lanes between them), loads it into a
simulation (`load_usd`: boxes named by their prim paths; `site_from_stage`: the marked graph),
sends three robots round the loop of places with go_to, records the run and writes it back
as a stage usdview or Omniverse plays (`export_usd`):
    python examples/18_openusd/main.py --out twin_run.usda
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from pxr import Gf, Sdf, Usd, UsdGeom

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.actions import GoTo
from fleetsim.recording.usd_export import export_usd
from fleetsim.usd import load_usd
from fleetsim.usd.site import site_from_stage

PLACES = {"dock": (0.0, 0.0), "aisle": (0.0, 8.0), "station": (6.0, 8.0), "yard": (6.0, 0.0)}


def write_stage(path: Path) -> None:
    """The twin: racks along an aisle and the four places, in Y-up centimetres."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    racks = UsdGeom.PointInstancer.Define(stage, "/Twin/Racks")
    UsdGeom.Cube.Define(stage, "/Twin/Racks/Rack").CreateSizeAttr(100.0)  # 1 m cubes
    racks.CreatePrototypesRel().SetTargets(["/Twin/Racks/Rack"])
    racks.CreateProtoIndicesAttr([0] * 12)
    racks.CreatePositionsAttr([(150.0 * side, 50.0, -100.0 * (k + 1)) for side in (-1, 1)
                               for k in range(6)])  # fmt: skip
    for name, (x, y) in PLACES.items():  # fleetsim (x, y) is USD (x, -z) here
        prim = stage.DefinePrim(f"/Twin/Nav/{name}", "Xform")
        UsdGeom.Xformable(prim).AddTranslateOp().Set(Gf.Vec3d(100 * x, 0, -100 * y))
        prim.CreateAttribute("fleetsim:node", Sdf.ValueTypeNames.String).Set("waypoint")
    for a, b in zip(PLACES, [*list(PLACES)[1:], "dock"], strict=True):  # a loop, one way
        stage.GetPrimAtPath(f"/Twin/Nav/{a}").CreateRelationship("fleetsim:lanes").AddTarget(
            f"/Twin/Nav/{b}"
        )
    stage.GetRootLayer().Save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500, help="steps of 0.1 s")
    parser.add_argument("--out", type=Path, help="write the run back here (.usda or .usdc)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    write_stage(folder / "twin.usda")
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        scene, bodies = load_usd(sim, folder / "twin.usda")
        sim.set_site(site_from_stage(scene))
        print(f"{len(bodies)} boxes, e.g. {bodies[0].name}; {len(sim.site.graph.names)} places")
        order, robots = list(PLACES), []
        for k in range(3):
            start = Pose.from_xyz(*PLACES[order[k]], 0)
            robots.append(Agent.from_params(AgentSpawnParams("mobile_robot", start), sim_core=sim))
            robots[-1].add_action_sequence(GoTo(order[(k + n + 1) % 4]) for n in range(4))
        recorder = sim.record(folder / "run.mcap")
        for _ in range(args.steps):
            sim.step_once()
        recorder.close()
        left = sum(len(r.get_action_queue()) + (r.get_current_action() is not None) for r in robots)
        print(f"trips done: {12 - left} of 12; collisions: {sim.collision_count}")
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")
    if args.out:
        done = export_usd(folder / "run.mcap", args.out)
        print(f"wrote {done.path}: {done.robots} robots, {done.samples} time samples")


if __name__ == "__main__":
    main()
