"""Fleet operations on a site: tasks, assignment, traffic control (node reservations), the
reference fleet manager with robot states and KPIs, and the route check of a site."""

from fleetsim.fleet.assignment import AssignmentPolicy, Greedy, Nearest
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.fleet.deadlocks import Deadlock
from fleetsim.fleet.manager import FleetManager
from fleetsim.fleet.near_miss import NearMisses
from fleetsim.fleet.route_check import RouteCheck, check_routes
from fleetsim.fleet.states import STATES, RobotState
from fleetsim.fleet.tasks import Task, TaskStatus, poisson_tasks, task_list, tasks_from_file
from fleetsim.fleet.traffic import TrafficControl

__all__ = [
    "STATES",
    "AssignmentPolicy",
    "Batteries",
    "BatteryParams",
    "Deadlock",
    "FleetManager",
    "Greedy",
    "NearMisses",
    "Nearest",
    "RobotState",
    "RouteCheck",
    "Task",
    "TaskStatus",
    "TrafficControl",
    "check_routes",
    "poisson_tasks",
    "task_list",
    "tasks_from_file",
]
