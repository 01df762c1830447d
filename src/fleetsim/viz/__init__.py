"""Viewing: the PyBullet GUI's controls (keys, camera, visualizer switches), the live data
monitor, PNG pictures of sites and images.

The simulation core calls the GUI controls and the monitor through the protocols of
`fleetsim.core.frontends`; the `fleetsim` package provides these classes to it when imported.
"""

from fleetsim.viz.gui import GuiControls
from fleetsim.viz.images import save_png
from fleetsim.viz.monitor import DataMonitor, MonitorFigures

__all__ = ["DataMonitor", "GuiControls", "MonitorFigures", "save_png"]
