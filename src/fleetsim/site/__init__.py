"""Sites: navigation graphs of named nodes and lanes (arrays), routing, and site importers."""

from fleetsim.site.graph import NODE_PROPERTIES, NavGraph, Route, RouteError
from fleetsim.site.movingai import GridMap, load_movingai

__all__ = ["NODE_PROPERTIES", "GridMap", "NavGraph", "Route", "RouteError", "load_movingai"]
