"""Sites: navigation graphs of named nodes and lanes (arrays), routing, and site importers."""

from fleetsim.site.graph import NODE_PROPERTIES, NavGraph, Route, RouteError
from fleetsim.site.movingai import GridMap, load_movingai
from fleetsim.site.rmf_building import BuildingSite, Spawn, load_rmf_building
from fleetsim.site.site import Obstacles, Site

__all__ = [
    "NODE_PROPERTIES",
    "BuildingSite",
    "GridMap",
    "NavGraph",
    "Obstacles",
    "Route",
    "RouteError",
    "Site",
    "Spawn",
    "load_movingai",
    "load_rmf_building",
]
