"""Backend: the only package that talks to PyBullet (client, shapes, bodies, physics)."""

from fleetsim.backend import _quiet_import  # noqa: F401  (first: no import banner)
from fleetsim.backend.client import FLOOR_URDF, PYBULLET_DATA, Backend
from fleetsim.backend.shapes import ShapeCache

__all__ = ["FLOOR_URDF", "PYBULLET_DATA", "Backend", "ShapeCache"]
