"""The root `fleetsim` command; sub-commands live in their own modules."""

from __future__ import annotations

import gc
import logging

import typer

from fleetsim import __version__
from fleetsim.cli import (
    bench,
    convert,
    fuzz,
    lorr,
    models,
    replay,
    report,
    rmf,
    ros2,
    scenario,
    site,
    sweep,
    usd,
    vda5050,
)
from fleetsim.logs import LogLevelManager

try:  # typer 0.29 and later print a flag's type, "<bool>", beside it in help: flags have none
    from typer.core import TyperOption

    _display_type_rich = TyperOption.display_type_rich

    def _flag_untyped(self: TyperOption, ctx: object) -> str | None:
        return None if getattr(self, "is_flag", False) else _display_type_rich(self, ctx)  # type: ignore[arg-type]

    TyperOption.display_type_rich = _flag_untyped  # type: ignore[method-assign]
except (ImportError, AttributeError):  # (older typer: nothing to hide)
    pass

app = typer.Typer(
    name="fleetsim",
    help="fleetsim: a kinematics-first simulator for robot fleets.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(models.app, name="models")
app.command()(scenario.run)
app.command()(scenario.validate)
app.command()(scenario.schema)
app.add_typer(scenario.examples_app, name="examples")
app.command()(bench.bench)
app.add_typer(convert.app, name="import")
app.add_typer(site.app, name="site")
app.command(name="vda5050")(vda5050.vda5050)
app.command(name="rmf")(rmf.rmf)
app.command(name="ros2")(ros2.ros2)
app.command(name="replay")(replay.replay)
app.command(name="report")(report.report)
app.command(name="sweep")(sweep.sweep)
app.command(name="fuzz")(fuzz.fuzz)
app.add_typer(lorr.app, name="lorr")
app.add_typer(usd.app, name="usd")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fleetsim {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Log what fleetsim does.", metavar=""
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version.", metavar=""
    ),
) -> None:
    """Set up logging for the command line (the library itself never configures logging)."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    LogLevelManager.set_log_level(logging.DEBUG if verbose else logging.WARNING)


def main() -> None:
    """The `fleetsim` command."""
    try:
        app()
    finally:
        # The command is done (its files closed, its servers and workers stopped); what is left
        # is the interpreter's teardown, whose garbage collections walk every object the
        # imports made: 60-100 ms, a tenth of a short command. Frozen objects are left to the
        # operating system; atexit handlers (logging's flush) and std stream flushes still run.
        gc.freeze()
