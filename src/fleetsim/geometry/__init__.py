"""Geometry: `Pose`, `Path`, `ShapeParams` and vectorised quaternion helpers (`quat`)."""

from fleetsim.geometry import quat
from fleetsim.geometry.path import Path
from fleetsim.geometry.pose import Pose
from fleetsim.geometry.shapes import ShapeParams

__all__ = ["Path", "Pose", "ShapeParams", "quat"]
