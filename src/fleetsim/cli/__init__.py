"""The `fleetsim` command line (typer). Nothing in the library imports this package."""

from fleetsim.cli.app import app, main

__all__ = ["app", "main"]
