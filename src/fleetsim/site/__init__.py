"""Sites: navigation graphs of named nodes and lanes (arrays), routing, and site importers."""

from fleetsim.site.graph import NODE_PROPERTIES, NavGraph, Route, RouteError

__all__ = ["NODE_PROPERTIES", "NavGraph", "Route", "RouteError"]
