"""`fleetsim ros2 SCENARIO`: a scenario's robots as ROS 2 robots (odom, tf, scan, battery_state,
cmd_vel, navigate_to_pose; /clock, /fleet/poses, markers, doors and lifts), until Ctrl-C or
SIGTERM (`fleetsim.interfaces.ros2`)."""

from __future__ import annotations

import signal

import typer

from fleetsim.cli.scenario import exit_for, exit_if_stopped, handle_stop_signals, print_summary
from fleetsim.cli.serving import DURATION, say_turned_off, without_drivers
from fleetsim.errors import FleetSimError
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def ros2(
    scenario: str = typer.Argument(..., help="A scenario file, or a bundled name."),
    domain_id: int = typer.Option(0, "--domain-id", help="The ROS 2 domain (0 to 101)."),
    rtf: float = typer.Option(
        1.0, "--rtf", help="Target real-time factor (0: as fast as it goes)."
    ),
    duration: float | None = DURATION,
    odom_hz: float = typer.Option(
        10.0, "--odom-hz", help="Odometry a simulated second, per robot."
    ),
    battery_hz: float = typer.Option(
        1.0, "--battery-hz", help="battery_state a simulated second, per robot."
    ),
    map_to_odom: bool = typer.Option(
        True,
        "--map-to-odom/--no-map-to-odom",
        help="Publish map -> odom (off: your own localisation does).",
    ),
    frame_prefix: bool = typer.Option(
        True,
        "--frame-prefix/--bare-frames",
        help="Frames as <robot>/odom, <robot>/base_footprint (bare: odom, base_footprint).",
    ),
    navigation: bool = typer.Option(
        True,
        "--navigation/--no-navigation",
        help="Each robot's navigate_to_pose server (off: starts sooner; 1,000 robots' servers "
        "take about 40 s to set up on 2 cores).",
    ),
    bag: str | None = typer.Option(
        None, "--bag", help="Also write a ROS 2 bag (rosbag2, MCAP) of what is published, here."
    ),
    network: bool = typer.Option(
        False,
        "--network",
        help="Talk on the machine's network as ROS 2's defaults do (default: loopback only).",
    ),
    overrides: list[str] = typer.Option([], "--set", help="key.path=value (repeatable)."),
) -> None:
    """Serve the scenario's robots to ROS 2 nodes; each robot's topics under its name."""
    from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings

    handle_stop_signals()
    try:
        settings = Ros2Settings(
            domain_id=domain_id,
            localhost=not network,
            odom_hz=odom_hz,
            battery_hz=battery_hz,
            map_to_odom=map_to_odom,
            frame_prefix=frame_prefix,
            bag=bag,
            navigation=navigation,
        )
        loaded = load_scenario(scenario, overrides)
        turned_off = without_drivers(loaded.scenario)
        built = build(loaded, target_rtf=rtf)
        if duration is None:
            built.sim.params.duration = None  # until stopped
        if network:
            typer.echo(
                "warning: on the network: anyone who reaches it can drive the robots", err=True
            )
        with built.sim, Ros2Bridge(built.sim, built.scene.robots, settings) as bridge:
            names = [robot.name for robot in bridge.robots]
            where = "loopback" if settings.localhost else "network"
            typer.echo(f"ROS 2 domain {domain_id} ({where}): {len(names)} robots: /{names[0]}/... ")
            say_turned_off("ROS 2", turned_off)
            summary = run_scenario(built, duration=duration)
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt as exc:  # stopped before the run began
        raise typer.Exit(128 + getattr(exc, "signum", signal.SIGINT)) from None
    print_summary(summary)
    if bridge.bag is not None:
        typer.echo(f"ROS 2 bag: {bridge.bag.path} ({bridge.bag.messages:,} messages, MCAP)")
    exit_if_stopped(summary)
