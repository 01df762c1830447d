"""Viewing helpers built on the simulation (nothing in the library imports this package)."""

from fleetsim.viz.images import save_png

__all__ = ["save_png"]
