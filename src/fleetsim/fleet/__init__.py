"""Fleet operations on a site: tasks, assignment, traffic control (node reservations), the
reference fleet manager with robot states and KPIs, and the route check of a site."""

from fleetsim.fleet.accounts import CollisionLog, RobotAccounts
from fleetsim.fleet.assignment import AssignmentPolicy, Greedy, Nearest
from fleetsim.fleet.battery import Batteries, BatteryParams
from fleetsim.fleet.charging import Charging
from fleetsim.fleet.deadlocks import Deadlock
from fleetsim.fleet.kpis import KpiSeries
from fleetsim.fleet.manager import FleetManager
from fleetsim.fleet.near_miss import NearMisses
from fleetsim.fleet.parking import Parking
from fleetsim.fleet.route_check import RouteCheck, check_routes
from fleetsim.fleet.stalls import StallWatch
from fleetsim.fleet.states import STATES, RobotState
from fleetsim.fleet.task_book import TaskBook
from fleetsim.fleet.tasks import Task, TaskStatus, poisson_tasks, task_list, tasks_from_file
from fleetsim.fleet.traffic import TrafficControl

__all__ = [
    "STATES",
    "AssignmentPolicy",
    "Batteries",
    "BatteryParams",
    "Charging",
    "CollisionLog",
    "Deadlock",
    "FleetManager",
    "Greedy",
    "KpiSeries",
    "NearMisses",
    "Nearest",
    "Parking",
    "RobotAccounts",
    "RobotState",
    "RouteCheck",
    "StallWatch",
    "Task",
    "TaskBook",
    "TaskStatus",
    "TrafficControl",
    "check_routes",
    "poisson_tasks",
    "task_list",
    "tasks_from_file",
]
