"""Fleet operations on a site: checking a site's routes (and, next, tasks, a reference fleet
manager with traffic control, batteries and KPIs)."""

from fleetsim.fleet.route_check import RouteCheck, check_routes

__all__ = ["RouteCheck", "check_routes"]
