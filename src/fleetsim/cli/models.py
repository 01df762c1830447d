"""`fleetsim models`: list the robot catalogue, and `fleetsim models show NAME`."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from fleetsim.errors import FleetSimError
from fleetsim.models import auto_detect_profile, list_all_models, resolve_urdf

app = typer.Typer(help="The robot model catalogue.", invoke_without_command=True)

EXIT_BAD_INPUT = 2


def _rows() -> list[dict[str, Any]]:
    rows = []
    for status in list_all_models().values():
        robot_type = None
        if status.available:
            try:
                robot_type = auto_detect_profile(status.path or status.name).robot_type
            except FleetSimError as exc:  # a file that exists but does not load
                status = dataclasses.replace(status, available=False, reason=str(exc))
        rows.append({**dataclasses.asdict(status), "type": robot_type})
    return rows


@app.callback()
def list_models(
    ctx: typer.Context,
    as_json: bool = typer.Option(
        False, "--json", help="Print JSON instead of a table.", metavar=""
    ),
) -> None:
    """List every catalogued model: name, tier, type and whether it is available here."""
    if ctx.invoked_subcommand is not None:
        return
    rows = _rows()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    console = Console()
    table = Table(title="fleetsim robot models", box=box.SIMPLE)
    for column in ("name", "tier", "type", "available"):
        table.add_column(column, no_wrap=True)
    for r in rows:
        table.add_row(r["name"], r["tier"], r["type"] or "-", "yes" if r["available"] else "no")
    console.print(table)
    for r in rows:
        if not r["available"]:
            console.print(f"[dim]{r['name']}: {r['reason']}[/dim]", soft_wrap=True)
    console.print("Details, paths and joints: fleetsim models show NAME (or --json).")


def _finite(values: tuple[float, ...]) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in values]


@app.command("show")
def show(
    name: str = typer.Argument(..., help="A model name (see `fleetsim models`) or a URDF path."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables.", metavar=""),
) -> None:
    """Show a model's profile: type, end effector and joints with limits."""
    try:
        path = resolve_urdf(name)
        profile = auto_detect_profile(path)
    except FleetSimError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    data = {**dataclasses.asdict(profile), "name": name, "path": path}
    data["joint_lower_limits"] = _finite(profile.joint_lower_limits)
    data["joint_upper_limits"] = _finite(profile.joint_upper_limits)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    console = Console()
    console.print(f"[bold]{name}[/bold]  {path}")
    console.print(
        f"type: {profile.robot_type}   base link: {profile.base_link_name}   "
        f"joints: {profile.num_joints}"
    )
    ee = (
        f"{profile.ee_link_name} (link {profile.ee_link_index})" if profile.ee_link_name else "none"
    )
    console.print(f"end effector: {ee}")
    if profile.movable_joint_names:
        table = Table(title="movable joints")
        for column in ("index", "name", "lower", "upper", "max velocity", "wheel"):
            table.add_column(column)
        for i, jname in enumerate(profile.movable_joint_names):
            lo, hi = profile.joint_lower_limits[i], profile.joint_upper_limits[i]
            table.add_row(
                str(profile.movable_joint_indices[i]),
                jname,
                f"{lo:.3f}" if math.isfinite(lo) else "-",
                f"{hi:.3f}" if math.isfinite(hi) else "-",
                f"{profile.joint_max_velocities[i]:.2f}",
                "yes" if jname in profile.wheel_joint_names else "",
            )
        console.print(table)
