"""fleetsim's nodes for behaviour trees: actions (go to a place, follow a route, wait, wait for
a door or a robot, pick, drop, charge, leave) and conditions (battery, a place free, a person
or robot near, at a place). `LEAVES` names each with its ports; `ACTIONS` and `CONDITIONS` do
the work, each a function of (runner, owner, state, ports) that says "running", "success" or
"failure" (actions are called at their start and then while running; `HALTS` stop them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.actions import Drop, GoTo, Pick
from fleetsim.actions.base import ActionStatus
from fleetsim.behavior.trees import LeafSpec, Port
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.site.graph import RouteError

if TYPE_CHECKING:
    from fleetsim.behavior.runner import Behaviors, Owner

RUNNING, SUCCESS, FAILURE = "running", "success", "failure"
AT_PLACE_M = 0.5  # a body this near a node is at it
# A person held back this near the end of its walk (others stand at the place: a queue, a
# break room), coming no closer (its speed toward the place below this fraction of its free
# speed), has got there.
CROWDED_M, STILL = 2.0, 0.2


def there(crowd: Any, rows: np.ndarray) -> np.ndarray:
    """(k,) bool: whether each person of crowd `rows` is at the end of its walk: walked to it,
    or held back within `CROWDED_M` of it and coming no closer."""
    end = crowd.points[crowd.last[rows]]
    to_end = end - crowd.x[rows]
    left = np.hypot(to_end[:, 0], to_end[:, 1])
    closing = np.einsum("ij,ij->i", crowd.v[rows], to_end) / np.maximum(left, 1e-9)
    held = (left <= CROWDED_M) & (closing < STILL * crowd.v0[rows])
    done: np.ndarray = (crowd.leg[rows] > crowd.last[rows]) | held
    return done


def _spec(name: str, kind: str, who: str, doc: str, **ports: Port) -> LeafSpec:
    return LeafSpec(name, kind, who, ports, doc)


LEAVES: dict[str, LeafSpec] = {s.name: s for s in (
    _spec("GoTo", "action", "both", "walk or drive to a node of the site's graph, along it",
          place=Port("text", None, "the node")),
    _spec("FollowRoute", "action", "both", "go to each of several nodes in turn",
          places=Port("list", None, "the nodes, separated by ';'")),
    _spec("Wait", "action", "both", "stand for a while (picking, a break)",
          seconds=Port("number", None, "simulated seconds")),
    _spec("WaitForDoor", "action", "both", "stand until a door is open",
          door=Port("text", None, "the door's name")),
    _spec("WaitForRobot", "action", "both", "stand until a robot is near",
          robot=Port("text", None, "the robot's name"),
          distance=Port("number", "2.0", "m between centres")),
    _spec("ChoosePlace", "action", "both", "choose one of the site's nodes with a tag at "
          "random (seeded), for the next leaves", tag=Port("text", None, "the tag (pickup, "
          "dropoff, charger, ...)"), place=Port("output", None, "where to write it: {key}")),
    _spec("Leave", "action", "person", "leave the floor (the tree ends)"),
    _spec("Pick", "action", "robot", "pick up an object (a scenario object's name)",
          object=Port("text", None, "the object's name")),
    _spec("Drop", "action", "robot", "put down what the robot carries, where it stands"),
    _spec("Charge", "action", "robot", "charge at a charger node until the battery is full "
          "enough", percent=Port("number", "90", "percent to charge to")),
    _spec("BatteryAbove", "condition", "robot", "the battery's charge is above a percentage",
          percent=Port("number", None, "percent")),
    _spec("AtPlace", "condition", "both", "within 0.5 m of a node",
          place=Port("text", None, "the node")),
    _spec("PlaceFree", "condition", "both", "no other robot or person within a radius of a node",
          place=Port("text", None, "the node"), radius=Port("number", "1.0", "m")),
    _spec("PersonNear", "condition", "both", "another person within a distance",
          distance=Port("number", "2.0", "m between centres")),
    _spec("RobotNear", "condition", "both", "another robot within a distance",
          distance=Port("number", "2.0", "m between centres")),
)}  # fmt: skip

Leaf = Callable[["Behaviors", "Owner", dict[str, Any], dict[str, str]], str]


def _number(owner: Owner, ports: dict[str, str], name: str) -> float:
    try:
        value = float(ports[name])
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{owner.source}: {owner.name}: port {name}={ports[name]!r} is not a "
                          f"number >= 0")  # fmt: skip
    return value


def _node(run: Behaviors, owner: Owner, name: str) -> int:
    site = run.sim.site
    if site is None:
        raise ConfigError(f"{owner.source}: {owner.name}: places need a site")
    return int(site.graph.node(name))


# -- actions ---------------------------------------------------------------------------------


def _walk(run: Behaviors, owner: Owner, state: dict[str, Any], places: list[str]) -> str:
    """Start `owner` along `places`, one after another."""
    for name in places:
        _node(run, owner, name)
    if owner.kind == "person":
        legs, here = [], owner.at
        for name in places:
            try:
                legs.append(run.sim.people.route_between(here, name)[1:])
            except RouteError as exc:
                run.note(owner, f"no way from {here} to {name}: {exc}")
                return FAILURE
            here = name
        route = np.concatenate(legs) if legs else np.empty((0, 2))
        if not len(route):
            route = run.sim.people.positions[run.row(owner)][None].copy()
        run.sim.people.crowd.reroute(np.array([owner.body]), [route])
        state["to"] = places[-1]
        run.walking.add(owner.index)
        return RUNNING
    state["actions"] = actions = [GoTo(name) for name in places]
    for action in actions:
        action.on_done = lambda *_: run.wake(owner)
        owner.body.add_action(action)
    return RUNNING


def _walked(run: Behaviors, owner: Owner, state: dict[str, Any]) -> str:
    if owner.kind == "person":
        crowd = run.sim.people.crowd
        row = np.array([run.row(owner)])
        if not there(crowd, row)[0]:
            return RUNNING
        if not crowd.leg[row[0]] > crowd.last[row[0]]:
            _stop(run, owner, state)  # (as near as the others there let it come: it stands)
        owner.at = state["to"]
        run.walking.discard(owner.index)
        return SUCCESS
    statuses = [a.status for a in state["actions"]]
    if any(s in (ActionStatus.FAILED, ActionStatus.CANCELLED) for s in statuses):
        bad = next(a for a in state["actions"] if a.status is not ActionStatus.COMPLETED)
        run.note(owner, f"GoTo {bad.node}: {bad.error_message or bad.status.value}")
        return FAILURE
    return SUCCESS if statuses[-1] is ActionStatus.COMPLETED else RUNNING


def _stop(run: Behaviors, owner: Owner, state: dict[str, Any]) -> None:
    """A halted motion: a person stands where it is, a robot's actions are cancelled."""
    if owner.kind == "person":
        run.walking.discard(owner.index)
        if owner.alive:
            here = run.sim.people.positions[run.row(owner)][None].copy()
            run.sim.people.crowd.reroute(np.array([owner.body]), [here])
    elif state.get("actions"):
        owner.body.clear_actions()


def go_to(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """GoTo: start, then until there."""
    if "to" not in state and "actions" not in state:
        return _walk(run, owner, state, [ports["place"]])
    return _walked(run, owner, state)


def follow_route(run: Behaviors, owner: Owner, state: dict[str, Any],
                 ports: dict[str, str]) -> str:  # fmt: skip
    """FollowRoute: start, then until at the last place."""
    if "to" not in state and "actions" not in state:
        places = [p.strip() for p in ports["places"].split(";") if p.strip()]
        return _walk(run, owner, state, places)
    return _walked(run, owner, state)


def wait(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """Wait: until `seconds` have passed since it started."""
    now = run.sim.sim_time
    if "until" not in state:
        state["until"] = now + _number(owner, ports, "seconds")
        run.wake(owner, state["until"])
    return SUCCESS if now >= state["until"] - 1e-9 else RUNNING


def wait_for_door(run: Behaviors, owner: Owner, state: dict[str, Any],
                  ports: dict[str, str]) -> str:  # fmt: skip
    """WaitForDoor: until the door is open."""
    doors = run.sim.doors
    name = ports["door"]
    if doors is None or name not in doors.doors:
        run.note(owner, f"no door {name!r} on the site")
        return FAILURE
    return SUCCESS if doors.is_open(name) else RUNNING


def wait_for_robot(run: Behaviors, owner: Owner, state: dict[str, Any],
                   ports: dict[str, str]) -> str:  # fmt: skip
    """WaitForRobot: until the robot is within `distance`."""
    robot = run.robot_named(ports["robot"])
    if robot is None:
        run.note(owner, f"no robot {ports['robot']!r}")
        return FAILURE
    pose = robot.get_pose()
    gap = float(np.hypot(*(run.position(owner) - (pose.x, pose.y))))
    return SUCCESS if gap <= _number(owner, ports, "distance") else RUNNING


def choose_place(run: Behaviors, owner: Owner, state: dict[str, Any],
                 ports: dict[str, str]) -> str:  # fmt: skip
    """ChoosePlace: a random node with the tag, written to the `place` output."""
    site = run.sim.site
    names = site.graph.nodes_with(ports["tag"]) if site is not None else []
    if not names:
        run.note(owner, f"no node of the site has the tag {ports['tag']!r}")
        return FAILURE
    run.output("place", names[int(run.rng.integers(len(names)))])
    return SUCCESS


def leave(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """Leave: off the floor; the tree ends."""
    run.sim.people.leave(np.array([owner.body]))
    owner.alive = False
    return SUCCESS


def _act(run: Behaviors, owner: Owner, state: dict[str, Any], make: Callable[[], Any]) -> str:
    if "actions" not in state:
        action = make()
        action.on_done = lambda *_: run.wake(owner)
        state["actions"] = [action]
        owner.body.add_action(action)
        return RUNNING
    action = state["actions"][0]
    if action.status is ActionStatus.COMPLETED:
        return SUCCESS
    if action.is_complete():
        run.note(owner, f"{type(action).__name__}: {action.error_message or action.status.value}")
        return FAILURE
    return RUNNING


def pick(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """Pick: the robot's Pick of the named object."""
    if "actions" not in state:
        target = run.object_named(ports["object"])
        if target is None:
            run.note(owner, f"no object {ports['object']!r}")
            return FAILURE
        return _act(run, owner, state, lambda: Pick(target_object_id=target.object_id))
    return _act(run, owner, state, lambda: None)


def drop(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """Drop: what it carries, where it stands."""
    return _act(run, owner, state, lambda: Drop(drop_relative_pose=Pose(), use_approach=False))


def charge(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """Charge: at a node tagged `charger`, until the battery is at `percent`."""
    site = run.sim.site
    x, y = run.position(owner)
    if site is None:
        run.note(owner, "charging needs a site with a charger node")
        return FAILURE
    node = site.graph.nearest_node(x, y)
    name = site.graph.names[node]
    if name not in site.graph.nodes_with("charger") or \
            float(np.hypot(*(site.graph.xy[node] - (x, y)))) > AT_PLACE_M:  # fmt: skip
        run.note(owner, f"not at a charger (nearest node {name})")
        return FAILURE
    k = owner.robot_row
    if run.batteries.percent[k] >= _number(owner, ports, "percent"):
        run.batteries.charging[k] = False
        return SUCCESS
    run.batteries.charging[k] = True
    return RUNNING


ACTIONS: dict[str, Leaf] = {
    "GoTo": go_to, "FollowRoute": follow_route, "Wait": wait, "WaitForDoor": wait_for_door,
    "WaitForRobot": wait_for_robot, "ChoosePlace": choose_place, "Leave": leave, "Pick": pick,
    "Drop": drop, "Charge": charge,
}  # fmt: skip


# Leaves that wake their tree when they end (an arrival, an action done, a wait over, or at
# once): a tree of only these is not ticked at a rate
WAKING = frozenset({"GoTo", "FollowRoute", "Wait", "Pick", "Drop", "ChoosePlace", "Leave"})


def _halt_charge(run: Behaviors, owner: Owner, state: dict[str, Any]) -> None:
    run.batteries.charging[owner.robot_row] = False


HALTS: dict[str, Callable[[Behaviors, Owner, dict[str, Any]], None]] = {
    "GoTo": _stop, "FollowRoute": _stop, "Pick": _stop, "Drop": _stop, "Charge": _halt_charge,
}  # fmt: skip


# -- conditions ------------------------------------------------------------------------------


def battery_above(run: Behaviors, owner: Owner, state: dict[str, Any],
                  ports: dict[str, str]) -> str:  # fmt: skip
    """BatteryAbove: the robot's charge, percent."""
    above = run.batteries.percent[owner.robot_row] > _number(owner, ports, "percent")
    return SUCCESS if above else FAILURE


def at_place(run: Behaviors, owner: Owner, state: dict[str, Any], ports: dict[str, str]) -> str:
    """AtPlace: within `AT_PLACE_M` of the node."""
    node = _node(run, owner, ports["place"])
    xy = run.sim.site.graph.xy[node]
    return SUCCESS if np.hypot(*(run.position(owner) - xy)) <= AT_PLACE_M else FAILURE


def place_free(run: Behaviors, owner: Owner, state: dict[str, Any],
               ports: dict[str, str]) -> str:  # fmt: skip
    """PlaceFree: no other body within `radius` of the node."""
    xy = run.sim.site.graph.xy[_node(run, owner, ports["place"])]
    radius = _number(owner, ports, "radius")
    near = run.bodies_near(owner, xy, radius)
    return FAILURE if near else SUCCESS


def person_near(run: Behaviors, owner: Owner, state: dict[str, Any],
                ports: dict[str, str]) -> str:  # fmt: skip
    """PersonNear: another person within `distance`."""
    here, reach = run.position(owner), _number(owner, ports, "distance")
    return SUCCESS if run.people_near(owner, here, reach) else FAILURE


def robot_near(run: Behaviors, owner: Owner, state: dict[str, Any],
               ports: dict[str, str]) -> str:  # fmt: skip
    """RobotNear: another robot within `distance`."""
    here, reach = run.position(owner), _number(owner, ports, "distance")
    return SUCCESS if run.robots_near(owner, here, reach) else FAILURE


CONDITIONS: dict[str, Leaf] = {
    "BatteryAbove": battery_above, "AtPlace": at_place, "PlaceFree": place_free,
    "PersonNear": person_near, "RobotNear": robot_near,
}  # fmt: skip
