"""Navigation graph at scale: build time and route time for grid-like graphs of N nodes.

Then a MovingAI grid map of a warehouse (1,800 x 1,912 cells by default): load time, routes, and
the time to make its obstacles bodies in a simulation. Then open N x N grid maps (`--open`,
1,000 and 3,000 by default): memory at the peak of loading and held after (bytes a cell, from
tracemalloc), a route corner to corner, the nearest nodes of 10,000 points and the traffic
control's tables (conflict sets, distinct neighbours, reachability).
Each graph is a square lattice (2 m apart) of two-way lanes with 10% of the nodes removed at
random (so routes detour), the shape of a warehouse or a MAPF map. Routes join random node pairs.
    python benchmarks/site_graph.py --sizes 10000 100000 --routes 20 --open 1000 3000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.fleet.conflicts import conflict_sets, distinct_neighbours
from fleetsim.memory import BYTES_PER_GRID_CELL, SITE_LIMIT_ENV
from fleetsim.site import NavGraph, RouteError, Site
from fleetsim.site.movingai import load_movingai


def lattice(n: int, rng: np.random.Generator) -> NavGraph:
    side = int(np.ceil(np.sqrt(n / 0.9)))
    keep = rng.random(side * side) < 0.9
    index = np.full(side * side, -1)
    index[keep] = np.arange(keep.sum())
    cells = np.flatnonzero(keep)
    xy = np.column_stack((cells % side, cells // side)) * 2.0
    right = cells[(cells % side < side - 1) & keep[np.minimum(cells + 1, side * side - 1)]]
    up = cells[(cells + side < side * side) & keep[np.minimum(cells + side, side * side - 1)]]
    src = np.concatenate((index[right], index[up]))
    dst = np.concatenate((index[right + 1], index[up + side]))
    names = [f"n{k}" for k in range(len(cells))]
    return NavGraph(names, xy, src, dst, bidirectional=np.ones(len(src), dtype=bool))


def warehouse_map(path: Path, height: int, width: int, rng: np.random.Generator) -> None:
    """A MovingAI map of rack blocks (4 x 20 cells) with aisles between, plus some clutter."""
    cells = np.full((height, width), ord("."), dtype=np.uint8)
    for r0 in range(5, height - 25, 8):
        for c0 in range(5, width - 10, 26):
            cells[r0 : r0 + 4, c0 : c0 + 20] = ord("@")
    clutter = rng.random((height, width)) < 0.01
    cells[clutter] = ord("T")
    rows = "\n".join(row.tobytes().decode() for row in cells)
    path.write_text(f"type octile\nheight {height}\nwidth {width}\nmap\n{rows}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--routes", type=int, default=20)
    parser.add_argument("--map", type=int, nargs=2, default=(1800, 1912), metavar=("H", "W"))
    parser.add_argument("--open", type=int, nargs="*", default=[1000, 3000], metavar="N")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"{'nodes':>9} {'lanes':>9} {'build s':>8} {'route ms (median)':>18} {'max':>8}")
    for n in args.sizes:
        t0 = time.perf_counter()
        graph = lattice(n, rng)
        build_s = time.perf_counter() - t0
        times = []
        for _ in range(args.routes):
            a, b = rng.integers(len(graph), size=2)
            t0 = time.perf_counter()
            with contextlib.suppress(RouteError):  # an island cut off by removed nodes
                graph.route(int(a), int(b))
            times.append((time.perf_counter() - t0) * 1e3)
        print(
            f"{len(graph):>9,} {graph.lane_count:>9,} {build_s:>8.2f} "
            f"{np.median(times):>18.1f} {max(times):>8.1f}"
        )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warehouse.map"
        warehouse_map(path, *args.map, rng)
        t0 = time.perf_counter()
        grid = load_movingai(path)
        load_s = time.perf_counter() - t0
        graph = grid.graph
        times = []
        for _ in range(args.routes):
            a, b = rng.integers(len(graph), size=2)
            t0 = time.perf_counter()
            with contextlib.suppress(RouteError):
                graph.route(int(a), int(b))
            times.append((time.perf_counter() - t0) * 1e3)
        print(
            f"MovingAI {args.map[0]} x {args.map[1]}: {len(graph):,} free cells, "
            f"{graph.lane_count:,} lanes, {len(grid.rectangles):,} obstacle rectangles "
            f"(for {int(grid.blocked.sum()):,} blocked cells); load {load_s:.2f} s; "
            f"route median {np.median(times):.0f} ms, max {max(times):.0f} ms"
        )
        site = Site.from_grid(path)
        with MultiRobotSimulationCore(SimulationParams.from_dict({"target_rtf": 0})) as sim:
            t0 = time.perf_counter()
            bodies = sim.set_site(site)
            made_s = time.perf_counter() - t0
            print(f"sim.set_site: {len(bodies):,} static bodies in {made_s:.2f} s")
    os.environ.setdefault(SITE_LIMIT_ENV, "100")  # measure what the default would refuse
    for side in args.open:
        open_grid(side, rng)


def open_grid(side: int, rng: np.random.Generator) -> None:
    """An open side x side grid map: what it costs to load, route on and control traffic on."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "open.map"
        path.write_text(
            f"type octile\nheight {side}\nwidth {side}\nmap\n" + ("." * side + "\n") * side
        )
        tracemalloc.start()
        t0 = time.perf_counter()
        graph = load_movingai(path).graph
        load_s = time.perf_counter() - t0
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    cells = side * side
    t0 = time.perf_counter()
    route = graph.route("r0_c0", f"r{side - 1}_c{side - 1}")
    route_ms = (time.perf_counter() - t0) * 1e3
    points = rng.uniform(0, side, (10_000, 2))
    t0 = time.perf_counter()
    graph.nearest_nodes(points)
    nearest_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    conflict_sets(graph.xy, 0.92)
    distinct_neighbours(graph)
    graph.reachable([0])
    tables_s = time.perf_counter() - t0
    print(
        f"open {side:,} x {side:,} grid ({cells:,} cells): load {load_s:.2f} s, peak "
        f"{peak / 1e6:,.0f} MB ({peak / cells:.0f} B a cell; the estimate says "
        f"{BYTES_PER_GRID_CELL}), held {held / 1e6:,.0f} MB ({held / cells:.0f} B); route corner "
        f"to corner {route_ms:.1f} ms ({len(route.nodes):,} nodes); nearest nodes of 10,000 "
        f"points {nearest_s:.2f} s; traffic tables {tables_s:.2f} s"
    )


if __name__ == "__main__":
    main()
