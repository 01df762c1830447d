"""`fleetsim site show FILE`: what a site holds, and a PNG of it."""

from __future__ import annotations

import math
from pathlib import Path

import typer
import yaml

from fleetsim.cli.scenario import exit_for
from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.fleet import check_routes
from fleetsim.site import NODE_PROPERTIES, Site
from fleetsim.viz.site_plot import plot_site

app = typer.Typer(help="Sites: navigation graphs, grid maps, Open-RMF buildings.")


FILE = typer.Argument(..., help="A MovingAI .map or an Open-RMF .building.yaml file.")
LEVEL = typer.Option(None, "--level", help="Only this building level (default: all).")
GRAPH = typer.Option(0, "--graph", help="Building navigation graph index.")
CELL_SIZE = typer.Option(1.0, "--cell-size", help="Grid map metres per cell.")
BLOCKED = typer.Option("", "--blocked", help="Grid map: extra characters that are blocked.")


def load(file: Path, level: str | None, graph: int, cell_size: float, blocked: str) -> Site:
    """Load a site file (a grid map or a building) as the `site` commands' options say."""
    try:
        return Site.from_file(file, level=level, graph=graph, cell_size=cell_size, blocked=blocked)
    except FleetSimError as exc:
        raise exit_for(exc) from None


@app.command("show")
def show(
    file: Path = FILE,
    level: str | None = LEVEL,
    graph: int = GRAPH,
    cell_size: float = CELL_SIZE,
    blocked: str = BLOCKED,
    png: Path | None = typer.Option(None, "--png", help="Also draw the site into this PNG."),
) -> None:
    """Print a site's summary (nodes, lanes, named places, obstacles, robots it places)."""
    site = load(file, level, graph, cell_size, blocked)
    g = site.graph
    one_way = int((~g.bidirectional).sum())
    heights = [
        f"{name} ({site.elevation(name):g} m, {int((g.level == k).sum()):,} nodes)"
        for k, name in enumerate(g.level_names)
    ]
    typer.echo(f"{file}: levels {', '.join(heights)}")
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
    for lift in site.lifts:
        inside = sorted(n for n, name in site.lift_of.items() if name == lift.name)
        typer.echo(
            f"  lift {lift.name} at ({lift.x:.2f}, {lift.y:.2f}), serves "
            f"{', '.join(lift.levels) or 'no level'}; nodes in it: "
            f"{', '.join(inside) or 'none'}"
        )
    for door in site.doors:
        typer.echo(f"  door {door.name} ({door.kind}) on {door.level}")
    if png is not None:
        try:
            typer.echo(f"wrote {plot_site(site, png, title=file.name)}")
        except FleetSimError as exc:
            raise exit_for(exc) from None


@app.command("check")
def check(
    file: Path = FILE,
    level: str | None = LEVEL,
    graph: int = GRAPH,
    cell_size: float = CELL_SIZE,
    blocked: str = BLOCKED,
    robots: int = typer.Option(10, "--robots", min=1, help="Robots driving at once."),
    routes: int = typer.Option(50, "--routes", min=1, help="Routes to drive in all."),
    seed: int = typer.Option(0, "--seed", help="Chooses the starts and the goals."),
    model: str = typer.Option("mobile_robot", "--model", help="The robot model driven."),
    tolerance: float = typer.Option(0.1, "--tolerance", help="Allowed distance from lanes, m."),
) -> None:
    """Drive robots along random routes between the site's places: every route must arrive,
    robots stay within --tolerance of their lanes and never touch a wall or a blocked cell.
    Exits 1 if not."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise exit_for(ConfigError(f"--tolerance {tolerance}: expected metres >= 0"))
    site = load(file, level, graph, cell_size, blocked)
    try:
        report = check_routes(site, robots, routes, seed, model, tolerance)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    r = report
    typer.echo(f"{file}: {r.routes} routes by {robots} robots ({model}), seed {seed}")
    typer.echo(f"  reached          {r.reached} of {r.routes}")
    worst = r.worst_offset_at
    where = f" ({worst[0]} at {worst[1]:.2f}, {worst[2]:.2f})" if worst else ""
    typer.echo(
        f"  off the lanes    max {r.max_lane_offset_m * 100:.1f} cm (allowed "
        f"{tolerance * 100:.0f} cm){where}"
    )
    typer.echo(f"  wall contacts    {r.structure_contacts}")
    if site.grid is not None:
        typer.echo(f"  blocked cells    {r.blocked_cell_entries} robot-steps inside one")
    typer.echo(f"  simulated        {r.sim_time_s:.0f} s in {r.wall_time_s:.1f} s of wall time")
    for line in r.failures[:10]:
        typer.echo(f"  failed: {line}")
    for name, x, y in r.contacts[:10]:
        typer.echo(f"  contact: {name} touched the structure at ({x:.2f}, {y:.2f})")
    typer.echo("ok" if r.ok else "FAILED")
    if not r.ok:
        raise typer.Exit(1)


@app.command("export")
def export(
    file: Path = FILE,
    format: str = typer.Option(..., "--format", help="rmf-nav-graph or rmf-fleet-config"),
    output: Path = typer.Option(..., "-o", "--output", help="The file to write."),
    model: str = typer.Option("mobile_robot", "--model", help="rmf-fleet-config: the robots."),
    fleet_manager: str = typer.Option(
        "http://127.0.0.1:22011", "--fleet-manager", help="rmf-fleet-config: fleetsim rmf's URL."
    ),
    level: str | None = LEVEL,
    graph: int = GRAPH,
    cell_size: float = CELL_SIZE,
    blocked: str = BLOCKED,
) -> None:
    """Write a site in another tool's format: `rmf-nav-graph` (Open-RMF's navigation graph) or
    `rmf-fleet-config` (a starter config for RMF's demo fleet adapter, pointed at
    `fleetsim rmf`)."""
    formats = ("rmf-nav-graph", "rmf-fleet-config")
    if format not in formats:
        typer.echo(f"error: unknown format {format!r}; use one of {', '.join(formats)}", err=True)
        raise typer.Exit(2)
    site = load(file, level, graph, cell_size, blocked)
    if format == "rmf-fleet-config":
        from fleetsim.interfaces.rmf.fleet_config import fleet_config

        try:
            config = fleet_config(site, model, fleet_manager=fleet_manager)
        except FleetSimError as exc:
            raise exit_for(exc) from None
        output.write_text(yaml.safe_dump(config, sort_keys=False))
        robots = config["rmf_fleet"]["robots"]
        typer.echo(f"wrote {output} (fleet {config['rmf_fleet']['name']}, {len(robots)} robots)")
        return
    from fleetsim.interfaces.rmf.nav_graph import nav_graph

    data = nav_graph(
        site.graph,
        building_name=site.building_name or file.name.split(".")[0],
        doors=site.doors,
        unnamed=site.unnamed,
        lifts=site.lifts,
        lift_of=site.lift_of,
    )
    output.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None))
    counts = {name: len(level_data["vertices"]) for name, level_data in data["levels"].items()}
    shown = ", ".join(f"{name} {n} vertices" for name, n in counts.items())
    typer.echo(f"wrote {output} ({shown})")
