"""Sensors: planar range scans (2-D lidar) of many robots at once, from the body table."""

from fleetsim.sensors.lidar import LaserScan, LidarParams, lidar_params
from fleetsim.sensors.lidars import Lidar, LidarGroup, Lidars
from fleetsim.sensors.raycast import Beams, ShapeGrid, scan
from fleetsim.sensors.shapes import RayShapes, ray_shapes

__all__ = [
    "Beams",
    "LaserScan",
    "Lidar",
    "LidarGroup",
    "LidarParams",
    "Lidars",
    "RayShapes",
    "ShapeGrid",
    "lidar_params",
    "ray_shapes",
    "scan",
]
