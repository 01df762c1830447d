"""`fleetsim site show FILE`: what a site holds, and a PNG of it."""

from __future__ import annotations

from pathlib import Path

import typer

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import FleetSimError
from fleetsim.site import NODE_PROPERTIES, Site
from fleetsim.viz.site_plot import plot_site

app = typer.Typer(help="Sites: navigation graphs, grid maps, Open-RMF buildings.")


@app.command("show")
def show(
    file: Path = typer.Argument(..., help="A MovingAI .map or an Open-RMF .building.yaml file."),
    level: str | None = typer.Option(None, "--level", help="Building level (default: first)."),
    graph: int = typer.Option(0, "--graph", help="Building navigation graph index."),
    cell_size: float = typer.Option(1.0, "--cell-size", help="Grid map metres per cell."),
    png: Path | None = typer.Option(None, "--png", help="Also draw the site into this PNG."),
) -> None:
    """Print a site's summary (nodes, lanes, named places, obstacles, robots it places)."""
    try:
        site = (
            Site.from_grid(file, cell_size)
            if file.suffix == ".map"
            else Site.from_building(file, level, graph)
        )
    except FleetSimError as exc:
        raise exit_for(exc) from None
    g = site.graph
    one_way = int((~g.bidirectional).sum())
    typer.echo(f"{file}: levels {', '.join(g.level_names)}")
    typer.echo(f"  nodes {len(g):,}; lanes {g.lane_count:,} ({one_way:,} one-way)")
    lo, hi = g.xy.min(axis=0), g.xy.max(axis=0)
    typer.echo(f"  extent x {lo[0]:.2f}..{hi[0]:.2f} m, y {lo[1]:.2f}..{hi[1]:.2f} m")
    typer.echo(f"  obstacles {len(site.obstacles):,} static boxes")
    for prop in NODE_PROPERTIES:
        names = g.nodes_with(prop)
        if names:
            shown = ", ".join(names[:12]) + (f" (+{len(names) - 12})" if len(names) > 12 else "")
            typer.echo(f"  {prop}: {shown}")
    for spawn in site.spawns:
        typer.echo(f"  robot {spawn.robot_name} ({spawn.robot_type}) starts at {spawn.node}")
    if png is not None:
        try:
            typer.echo(f"wrote {plot_site(site, png, title=file.name)}")
        except FleetSimError as exc:
            raise exit_for(exc) from None
