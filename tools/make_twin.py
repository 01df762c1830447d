"""Make the bundled OpenUSD warehouse twin (src/fleetsim/scenarios/twin_warehouse.usda) with
pxr itself, written as a digital-twin tool writes one: centimetres, Y up, racks as a point
instancer of a rack prototype (four posts and four shelves), walls and a floor as meshes,
conveyors, a light and a material (which fleetsim reports and leaves), and the navigation
graph as prims marked `fleetsim:node` with `fleetsim:lanes` (see docs/guides/usd.md):

    python tools/make_twin.py [--aisles 6] [--out src/fleetsim/scenarios/twin_warehouse.usda]

The layout, in fleetsim's metres (x east, y north): aisles 3 m apart along y from 0 to 16,
alternating up and down; rack rows between them; a corridor along the bottom (westbound) and
one along the top (eastbound); parking and chargers below the bottom corridor, drop-off
stations above the top one; pick faces in the aisles. `benchmarks/usd.py` uses `rack_grid`
and `box_mesh` for its large twin.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from pxr import Gf, Sdf, Usd, UsdGeom, UsdLux, UsdShade

CM = 100.0  # stage units (centimetres) per metre


def at(x: float, y: float, z: float = 0.0) -> Gf.Vec3d:
    """fleetsim's (x, y, z) in metres as this stage's Y-up centimetres."""
    return Gf.Vec3d(x * CM, z * CM, -y * CM)


def box_mesh(stage: Usd.Stage, path: str, lo: tuple, hi: tuple) -> UsdGeom.Mesh:
    """A 12-triangle box mesh from lo to hi (stage units, its own frame)."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    mesh.CreatePointsAttr([(x, y, z) for z in (z0, z1) for y in (y0, y1) for x in (x0, x1)])
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    mesh.CreateFaceVertexCountsAttr([3] * len(tris))
    mesh.CreateFaceVertexIndicesAttr([i for t in tris for i in t])
    return mesh


def slab(stage: Usd.Stage, path: str, lo: tuple, hi: tuple) -> None:
    """A box from fleetsim's lo to hi (metres), written in the stage's Y-up centimetres."""
    a, b = at(*lo), at(*hi)
    box_mesh(
        stage,
        path,
        tuple(min(a[i], b[i]) for i in range(3)),
        tuple(max(a[i], b[i]) for i in range(3)),
    )


def rack_grid(
    stage: Usd.Stage, path: str, places: list[tuple[float, float]], yaw_deg: float = 0.0
) -> None:
    """A point instancer of racks (1 m deep, 2 m long, 2 m tall: four posts and four shelves,
    each a box mesh) standing at fleetsim's (x, y) places."""
    instancer = UsdGeom.PointInstancer.Define(stage, path)
    rack = UsdGeom.Xform.Define(stage, f"{path}/Prototypes/Rack")
    half_x, half_y, post = 0.5 * CM, 1.0 * CM, 0.06 * CM  # in the stage's axes: x, -z north
    for k, (sx, sz) in enumerate(((-1, -1), (1, -1), (-1, 1), (1, 1))):
        x0, z0 = sx * half_x - (post if sx > 0 else 0), sz * half_y - (post if sz > 0 else 0)
        box_mesh(stage, f"{rack.GetPath()}/Post{k}", (x0, 0, z0), (x0 + post, 2 * CM, z0 + post))
    for k, height in enumerate((0.1, 0.7, 1.3, 1.9)):
        box_mesh(
            stage,
            f"{rack.GetPath()}/Shelf{k}",
            (-half_x, height * CM, -half_y),
            (half_x, (height + 0.04) * CM, half_y),
        )
    instancer.CreatePrototypesRel().SetTargets([rack.GetPath()])
    instancer.CreateProtoIndicesAttr([0] * len(places))
    instancer.CreatePositionsAttr([Gf.Vec3f(*at(x, y)) for x, y in places])
    turn = Gf.Quath(Gf.Rotation(Gf.Vec3d(0, 1, 0), yaw_deg).GetQuat())
    instancer.CreateOrientationsAttr([turn] * len(places))


def node(stage: Usd.Stage, name: str, x: float, y: float, kind: str = "waypoint") -> Usd.Prim:
    """A navigation node: an Xform at (x, y) marked fleetsim:node."""
    xform = UsdGeom.Xform.Define(stage, f"/Twin/Nav/{name}")
    xform.AddTranslateOp().Set(at(x, y))
    prim = xform.GetPrim()
    prim.CreateAttribute("fleetsim:node", Sdf.ValueTypeNames.String).Set(kind)
    return prim


def lane(stage: Usd.Stage, here: str, there: str, one_way: bool = False) -> None:
    """A lane from node `here` to node `there` (every lane of a node goes one way, or none)."""
    prim = stage.GetPrimAtPath(f"/Twin/Nav/{here}")
    prim.CreateRelationship("fleetsim:lanes").AddTarget(f"/Twin/Nav/{there}")
    if one_way:
        prim.CreateAttribute("fleetsim:one_way", Sdf.ValueTypeNames.Bool).Set(True)


def make(out: Path, aisles: int = 6) -> Path:
    """The twin with `aisles` aisles (an even number: the last one runs down)."""
    stage = Usd.Stage.CreateNew(str(out))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/Twin").GetPrim())
    width = 3.0 * (aisles - 1)
    slab(stage, "/Twin/Floor", (-2, -5, -0.2), (width + 2, 21, 0))
    for name, lo, hi in (
        ("West", (-2.2, -5, 0), (-2, 21, 3)),
        ("East", (width + 2, -5, 0), (width + 2.2, 21, 3)),
        ("South", (-2, -5.2, 0), (width + 2, -5, 3)),
        ("North", (-2, 21, 0), (width + 2, 21.2, 3)),
    ):
        slab(stage, f"/Twin/Walls/{name}", lo, hi)
    racks = [(3.0 * a + 1.5, 3.0 + 2.0 * r) for a in range(aisles - 1) for r in range(6)]
    rack_grid(stage, "/Twin/Racks", racks)
    for k in range(aisles // 2):  # conveyors by the drop-off stations
        slab(
            stage, f"/Twin/Conveyors/Belt{k}", (6.0 * k + 0.4, 19.3, 0), (6.0 * k + 2.6, 20.3, 0.8)
        )
    UsdLux.DistantLight.Define(stage, "/Twin/Sun")
    paint = UsdShade.Material.Define(stage, "/Twin/Looks/RackOrange")
    UsdShade.MaterialBindingAPI.Apply(stage.GetPrimAtPath("/Twin/Racks")).Bind(paint)
    # the navigation graph
    xs = [1.5 * k for k in range(2 * (aisles - 1) + 1)]
    for k, x in enumerate(xs):  # the corridors: westbound along the bottom, eastbound on top
        node(stage, f"b{k}", x, 0.0)
        node(stage, f"t{k}", x, 16.0)
        node(stage, f"park{k}", x, -2.0, "parking,charger" if k % 3 == 0 else "parking")
        lane(stage, f"park{k}", f"b{k}")
        if k % 2 == 1:
            node(stage, f"drop{k // 2}", x, 18.5, "dropoff")
            lane(stage, f"drop{k // 2}", f"t{k}")
    for k in range(1, len(xs)):
        lane(stage, f"b{k}", f"b{k - 1}", one_way=True)
        lane(stage, f"t{k - 1}", f"t{k}", one_way=True)
    for a in range(aisles):  # aisles alternate: up from the bottom, down from the top
        inside = [(f"a{a}_{y}", float(y)) for y in (2, 5, 9, 13)]
        for name, y in inside:
            node(stage, name, 3.0 * a, y, "waypoint" if y == 2 else "pickup")
        names = [f"b{2 * a}"] + [name for name, _ in inside] + [f"t{2 * a}"]
        order = names if a % 2 == 0 else names[::-1]
        for here, there in itertools.pairwise(order):
            lane(stage, here, there, one_way=True)
    stage.GetRootLayer().Save()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aisles", type=int, default=6)
    parser.add_argument(
        "--out", type=Path, default=Path("src/fleetsim/scenarios/twin_warehouse.usda")
    )
    args = parser.parse_args()
    print(make(args.out, args.aisles))
