"""Imports pybullet once with its "pybullet build time" banner kept off the terminal.

The backend package imports this module first; later `import pybullet` statements reuse the
loaded module. Set the fleetsim log level to DEBUG to see PyBullet's native output.
"""

from fleetsim.logs import LogLevelManager

with LogLevelManager.quiet_native(fds=(1, 2)):
    import pybullet  # noqa: F401
