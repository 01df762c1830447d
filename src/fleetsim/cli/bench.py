"""`fleetsim bench`: fleet-size benchmarks, side by side with the peer when it is installed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from fleetsim.bench.suite import VARIANTS, Suite, peer_installed, plot, targets


def bench(
    sizes: str = typer.Option(
        "100,1000,10000",
        "--sizes",
        help="Fleet sizes, comma-separated (add 100000 for the largest; it takes minutes).",
    ),
    steps: int = typer.Option(100, "--steps", help="Timed steps per case (median reported)."),
    peer: bool = typer.Option(
        False, "--peer", help="Also run the pybullet-fleet package.", metavar=""
    ),
    peer_python: str | None = typer.Option(
        None, "--peer-python", help="Interpreter that has pybullet-fleet."
    ),
    arms: int = typer.Option(
        100, "--arms", help="Also time this many kinematic arms cycling joint targets (0: skip)."
    ),
    crowd: int = typer.Option(
        200,
        "--crowd",
        help="Also time this many mobile_robot URDFs crowded in one aisle (0: skip).",
    ),
    dense: str = typer.Option(
        "10000",
        "--dense",
        help="Dense workloads (cubes 0.6 m apart, all driving; omnidirectional and "
        "differential-drive) of these sizes, comma-separated ('' to skip; add 100000).",
    ),
    fleet: str = typer.Option(
        "",
        "--fleet",
        help="The fleet manager on the warehouse grown with the fleet, these sizes "
        "(e.g. 1000,5000,10000; 600 simulated seconds each).",
    ),
    fleet_seconds: float = typer.Option(
        600.0, "--fleet-seconds", help="Simulated seconds of each --fleet run.", min=1.0
    ),
    sensors: str = typer.Option(
        "",
        "--sensors",
        help="Every robot a 360-beam lidar at 10 Hz in the warehouse grown with the fleet, "
        "under its fleet manager, these sizes (e.g. 1000): rays a second and real-time factor.",
    ),
    lorr: str = typer.Option(
        "",
        "--lorr",
        help="LoRR kit mode on a 170 x 500 warehouse with these many robots (e.g. 1000,10000): "
        "the loop's time a tick beside the entries'.",
    ),
    lorr_entries: Path | None = typer.Option(
        None,
        "--lorr-entries",
        help="A folder with the kit's python/user_* entries for --lorr "
        "(default: fleetsim's entries).",
    ),
    lorr_ticks: int = typer.Option(200, "--lorr-ticks", help="Ticks of each --lorr run.", min=1),
    warehouse: bool = typer.Option(
        True, "--warehouse/--no-warehouse", help="Also time `fleetsim run warehouse`.", metavar=""
    ),
    peer_max: int = typer.Option(
        10_000, "--peer-max", help="Largest fleet to run the peer with (it slows down fast)."
    ),
    aabb: bool = typer.Option(
        True, "--aabb/--no-aabb", help="Also measure the AABB-only narrow phase.", metavar=""
    ),
    eager: bool = typer.Option(
        True, "--eager/--no-eager", help="Also measure eager pose sync.", metavar=""
    ),
    json_out: Path = typer.Option(
        Path("bench-results.json"), "--json", help="Where to write JSON."
    ),
    plot_out: Path = typer.Option(
        Path("bench-rtf.png"), "--plot", help="Where to write the PNG plot."
    ),
) -> None:
    """Step time and real-time factor as the fleet grows; spawn time and memory per robot."""
    console = Console()
    variants = (
        ["fleetsim", "fleetsim-1m", "fleetsim-all"]  # the workload and two held out from it
        + (["fleetsim-aabb"] if aabb else [])
        + (["fleetsim-eager"] if eager else [])
    )
    if peer:
        if not peer_installed(peer_python):
            where = f"for {peer_python}" if peer_python else "here"
            console.print(
                f"[red]pybullet-fleet is not installed {where}[/red] (install it in a virtual "
                "environment and pass its python with --peer-python)"
            )
            raise typer.Exit(2)
        variants.append("peer")
    counts, dense_counts, fleet_counts, sensor_counts, lorr_counts = (
        _sizes(console, option, text)
        for option, text in (
            ("--sizes", sizes),
            ("--dense", dense),
            ("--fleet", fleet),
            ("--sensors", sensors),
            ("--lorr", lorr),
        )
    )
    suite = Suite(
        counts,
        variants,
        steps=steps,
        peer_python=peer_python,
        peer_max=peer_max,
        arms=arms,
        crowd=crowd,
        dense=dense_counts,
        fleet=fleet_counts,
        fleet_seconds=fleet_seconds,
        sensors=sensor_counts,
        lorr=lorr_counts,
        lorr_ticks=lorr_ticks,
        lorr_entries=str(lorr_entries) if lorr_entries else None,
        warehouse=warehouse,
    )
    suite.run(progress=lambda msg: console.print(f"[dim]{msg}[/dim]"))
    table = Table(title="fleetsim bench (median ms per 0.1 s step)")
    # memory: what the process grew by from before spawning to after the timed steps
    for column in ("N", "variant", "ms/step", "RTF", "spawn s", "memory MB"):
        table.add_column(column, justify="right")
    for r in suite.results:
        if r["variant"] == "warehouse" and "wall_s" in r:
            table.add_row("", "fleetsim run warehouse", f"{r['wall_s']:.1f} s wall", "", "", "")
            continue
        if "error" in r:
            table.add_row(str(r["n"]), r["variant"], "[red]error[/red]", r["error"][:40], "", "")
            continue
        if r["variant"] == "fleet":
            table.add_row(
                f"{r['n']:,}",
                "fleet manager",
                f"{r['ms_per_step']:.2f}",
                f"{r['rtf']:.1f}x",
                f"{r['build_s']:.2f}",
                "",
            )
            continue
        if r["variant"] == "sensors":
            table.add_row(
                f"{r['n']:,}",
                f"lidars, {r['rays_per_s'] / 1e6:.1f} M rays/s",
                f"{r['ms_per_step']:.2f}",
                f"{r['rtf']:.1f}x",
                f"{r['build_s']:.2f}",
                "",
            )
            continue
        if r["variant"] == "lorr":
            table.add_row(
                f"{r['n']:,}", "LoRR kit loop (ms/tick)", f"{r['loop_ms_per_tick']:.2f}", "", "", ""
            )
            continue
        table.add_row(
            f"{r['n']:,}",
            r["variant"],
            f"{r['ms_per_step']:.2f}",
            f"{r['rtf']:.1f}x",
            f"{r['spawn_s']:.2f}",
            f"{r['memory_bytes'] / 1e6:,.0f}",
        )
    console.print(table)
    for r in suite.results:
        if "contacts" in r:
            console.print(f"{r['variant']}, {r['n']:,} robots: {r['contacts']:,} pairs touching")
        if r["variant"] == "lorr" and "error" not in r:
            entries = ", ".join(f"{k} {v:.2f}" for k, v in r["entry_ms_per_tick"].items() if v)
            console.print(
                f"LoRR kit mode, {r['n']:,} robots, {r['ticks']} ticks: fleetsim's "
                f"loop {r['loop_ms_per_tick']:.2f} ms a tick; the entries' ms a tick "
                f"({r['entries']}): {entries}; {r['tasks_finished']} tasks"
            )
        if r["variant"] == "fleet" and "error" not in r:
            console.print(
                f"fleet manager, {r['n']:,} robots, {r['seconds']:.0f} s: "
                f"{r['done']} tasks, {r['collisions']} collisions, {r['stalls']} "
                f"stalls, {r['unresolved']} unresolved deadlocks"
            )
    for n, ratio in suite.ratios().items():
        verdict = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
        console.print(f"{n:>7,} robots: fleetsim is {verdict} per step than the peer")
    goals = Table(title="targets")
    for column in ("target", "measured", "goal", "met"):
        goals.add_column(column, justify="left" if column == "target" else "right")
    marks = {True: "[green]yes[/green]", False: "[red]no[/red]", None: "[dim]-[/dim]"}
    for what, measured, goal, met in targets(suite):
        goals.add_row(what, measured, goal, marks[met])
    console.print(goals)
    console.print(f"[dim]measured {time.strftime('%Y-%m-%d')} on this machine[/dim]")
    json_out.write_text(json.dumps(suite.to_json(), indent=2))
    console.print(f"JSON: {json_out}")
    if plot(suite.results, plot_out):
        console.print(f"plot: {plot_out}")
    else:
        console.print("no plot: pip install 'fleetsim\\[bench]' for matplotlib")


def _sizes(console: Console, option: str, text: str) -> list[int]:
    """The sizes of a comma-separated option ('' for none); exits 2 on bad input."""
    try:
        return sorted(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        console.print(f"[red]{option} takes numbers separated by commas, got {text!r}[/red]")
        raise typer.Exit(2) from None


__all__ = ["VARIANTS", "bench"]
