"""Sensors: planar range scans (2-D lidar) of many robots at once, from the body table."""

from fleetsim.sensors.fields import FieldSet, SafetyFieldParams
from fleetsim.sensors.lidar import LaserScan, LidarParams, lidar_params
from fleetsim.sensors.lidars import Lidar, LidarGroup, Lidars
from fleetsim.sensors.raycast import Beams, ShapeGrid, scan
from fleetsim.sensors.safety import SafetyFields
from fleetsim.sensors.shapes import RayShapes, ray_shapes

__all__ = [
    "Beams",
    "FieldSet",
    "LaserScan",
    "Lidar",
    "LidarGroup",
    "LidarParams",
    "Lidars",
    "RayShapes",
    "SafetyFieldParams",
    "SafetyFields",
    "ShapeGrid",
    "lidar_params",
    "ray_shapes",
    "scan",
]
