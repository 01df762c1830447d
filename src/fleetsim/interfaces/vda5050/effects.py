"""What a vehicle's VDA 5050 actions do in the simulation (`VehicleEffects`), and which actions
a vehicle supports where (`SCOPES`, also what the factsheet lists).

- `pick`: takes the nearest pickable object within `PICK_RADIUS_M` of the vehicle and carries
  it; with none there the load is only recorded (a master control rarely models the goods).
  The load is reported in the state's `loads` with the `loadId`/`loadType` parameters (else the
  object's name). One load at a time: a second pick fails.
- `drop`: puts the load down where the vehicle is (at the height it was picked from); fails
  without a load, or when `loadId` names another load.
- `startCharging` / `stopCharging`: the vehicle must be on a charger node of the site (within
  `CHARGER_RADIUS_M`); the battery charges while charging.
- `wait`: does nothing for `duration` seconds; `finePositioning`: puts the vehicle exactly on
  its node's position (and theta), a small correction within the allowed deviation.

Each takes `duration` seconds of work when given as a parameter, else `DURATION_S`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.geometry import Pose
from fleetsim.interfaces.vda5050.actions import ActionError
from fleetsim.interfaces.vda5050.messages import Action, Load, Node
from fleetsim.objects.nearby import nearest_pickable
from fleetsim.site import Site

PICK_RADIUS_M = 1.0
CHARGER_RADIUS_M = 0.5
DURATION_S = {
    "pick": 2.0,
    "drop": 2.0,
    "startCharging": 1.0,
    "stopCharging": 1.0,
    "wait": 1.0,
    "finePositioning": 1.0,
}
# action type -> where a master control may use it (the factsheet's actionScopes)
SCOPES = {
    "cancelOrder": ("INSTANT",),
    "startPause": ("INSTANT",),
    "stopPause": ("INSTANT",),
    "stateRequest": ("INSTANT",),
    "factsheetRequest": ("INSTANT",),
    "initPosition": ("INSTANT",),
    "pick": ("NODE",),
    "drop": ("NODE",),
    "startCharging": ("INSTANT", "NODE"),
    "stopCharging": ("INSTANT", "NODE"),
    "wait": ("INSTANT", "NODE", "EDGE"),
    "finePositioning": ("NODE",),
}


def unsupported(action: Action, scope: str) -> str | None:
    """Why `action` cannot be used as a `scope` action (NODE, EDGE, INSTANT), else None."""
    scopes = SCOPES.get(action.action_type)
    if scopes is None:
        known = ", ".join(k for k, v in SCOPES.items() if scope in v)
        return f"unknown action {action.action_type!r} (supported here: {known})"
    if scope not in scopes:
        return f"{action.action_type!r} is not a {scope} action (only {', '.join(scopes)})"
    return None


@dataclass
class Carried:
    """A load the vehicle carries: its message, the object carried (None: reported only) and the
    height it was picked from."""

    load: Load
    obj: Any  # the SimObject carried, or None for a recorded-only load
    z: float  # the height it was picked from


class VehicleEffects:
    """The simulation side of one vehicle's actions. `position_of(node)` gives a node's
    (x, y, theta or None); `charging` is read by the battery model."""

    def __init__(self, robot: Any, site: Site | None, position_of: Any) -> None:
        self.robot, self.site, self.position_of = robot, site, position_of
        self.carried: list[Carried] = []
        self.charging = False

    @property
    def loads(self) -> list[Load]:
        """The loads carried, for the state's `loads`."""
        return [c.load for c in self.carried]

    def begin(self, action: Action, node: Node | None) -> float:
        """Start `action`: check it can be done here (an `ActionError` says why not); the seconds it
        takes."""
        kind = action.action_type
        duration = _duration(action)
        if kind == "pick" and self.carried:
            raise ActionError(f"already carries load {self.carried[0].load.load_id!r}")
        if kind == "drop":
            self._carried(action)
        if kind == "startCharging":
            self._check_charger()
        if kind == "finePositioning" and (node is None or self.position_of(node) is None):
            raise ActionError("finePositioning needs a node with a position")
        return duration

    def finish(self, action: Action, node: Node | None) -> None:
        """Finish `action`: pick, drop, charge or let go as it says."""
        kind = action.action_type
        if kind == "pick":
            self._pick(action)
        elif kind == "drop":
            self._drop(self._carried(action))
        elif kind == "startCharging":
            self.charging = True
        elif kind == "stopCharging":
            self.charging = False
        elif kind == "finePositioning" and node is not None:
            x, y, theta = self.position_of(node)
            pose = self.robot.get_pose()
            yaw = theta if theta is not None else pose.yaw
            self.robot.set_pose(Pose.from_yaw(x, y, pose.position[2], yaw))

    # -- helpers ----------------------------------------------------------------------------

    def _pick(self, action: Action) -> None:
        obj = nearest_pickable(self.robot, PICK_RADIUS_M)
        name = obj.name if obj is not None else "load"
        load = Load(
            load_id=str(action.parameter("loadId", name)),
            load_type=_text(action.parameter("loadType")),
        )
        z = 0.0
        if obj is not None:
            z = float(obj.get_pose().position[2])
            self.robot.attach_object(obj)
        self.carried.append(Carried(load, obj, z))

    def _drop(self, carried: Carried) -> None:
        self.carried.remove(carried)
        obj = carried.obj
        if obj is not None and not obj.is_removed:
            self.robot.detach_object(obj)
            here = obj.get_pose()
            x, y = self.robot.get_pose().position[:2]
            obj.set_pose(Pose((x, y, carried.z), here.orientation))

    def _carried(self, action: Action) -> Carried:
        if not self.carried:
            raise ActionError("carries no load to drop")
        wanted = action.parameter("loadId")
        for c in self.carried:
            if wanted is None or c.load.load_id == str(wanted):
                return c
        raise ActionError(
            f"carries no load {wanted!r} (carries "
            f"{', '.join(repr(c.load.load_id) for c in self.carried)})"
        )

    def _check_charger(self) -> None:
        graph = self.site.graph if self.site is not None else None
        chargers = graph.nodes_with("charger") if graph is not None else []
        if not chargers or graph is None:
            raise ActionError("the site has no charger nodes")
        xy = np.asarray(self.robot.get_pose().position[:2])
        ks = [graph.node(c) for c in chargers]
        dist = np.hypot(*(graph.xy[ks] - xy).T)
        k = int(np.argmin(dist))
        if dist[k] > CHARGER_RADIUS_M:
            raise ActionError(
                f"not on a charger: the nearest, {chargers[k]!r}, is {dist[k]:.2f} m away"
            )


def _duration(action: Action) -> float:
    value = action.parameter("duration", DURATION_S.get(action.action_type, 0.0))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ActionError(f"parameter duration must be a number of seconds, got {value!r}")
    if value < 0:
        raise ActionError(f"parameter duration must be >= 0 s, got {value!r}")
    return float(value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
