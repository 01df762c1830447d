"""`fleetsim usd`: what fleetsim reads from an OpenUSD stage, and runs written back as stages."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import FleetSimError

app = typer.Typer(help="OpenUSD stages: read them (info), write recordings as them (export).")


@app.command()
def info(
    stage: Path = typer.Argument(..., help="A .usd, .usda, .usdc or .usdz file."),
    cell_size: float = typer.Option(0.5, "--cell-size", help="The floor plan's cells (m)."),
) -> None:
    """Say what fleetsim reads from a stage: its boxes, what it leaves, its site."""
    from fleetsim.usd import read_stage
    from fleetsim.usd.site import site_from_stage

    try:
        started = time.perf_counter()
        scene = read_stage(stage)
        site = site_from_stage(scene, cell_size=cell_size)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    typer.echo(
        f"{stage}: {len(scene):,} boxes (metersPerUnit {scene.meters_per_unit:g}, up axis "
        f"{scene.up_axis}), {scene.skipped} prims left out by purpose or path, read in "
        f"{time.perf_counter() - started:.2f} s"
    )
    if len(scene):
        lo, hi = scene.centres.min(axis=0), scene.centres.max(axis=0)
        typer.echo(f"  box centres from {lo.round(2).tolist()} to {hi.round(2).tolist()} m")
    for kind, paths in sorted(scene.unused.items()):
        typer.echo(f"  not used: {kind}: {len(paths)} ({', '.join(paths[:3])})")
    how = "marked nodes" if scene.marks else f"the floor plan's free cells ({cell_size:g} m)"
    graph = site.graph
    typer.echo(f"  site: {len(graph.names):,} nodes, {len(graph.lane_from):,} lanes from {how}")


@app.command()
def export(
    recording: Path = typer.Argument(..., help="A recording (fleetsim run --record run.mcap)."),
    out: Path = typer.Argument(..., help="The stage to write (.usd, .usda or .usdc)."),
    rate: float = typer.Option(10.0, "--rate", help="Pose samples a simulated second."),
) -> None:
    """Write a recording as an OpenUSD stage usdview or Omniverse plays: the static world and
    every robot's pose over time as time samples."""
    from fleetsim.recording.usd_export import export_usd

    try:
        started = time.perf_counter()
        done = export_usd(recording, out, rate=rate)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    typer.echo(
        f"wrote {done.path}: {done.robots:,} robots, {done.samples:,} time samples "
        f"({done.seconds:.1f} simulated s at {rate:g} a second), {done.static_boxes:,} static "
        f"boxes, in {time.perf_counter() - started:.1f} s"
    )
