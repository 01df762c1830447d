"""VDA 5050 node, edge and instant actions on a simulated vehicle (real PyBullet, no network):
states WAITING -> INITIALIZING -> RUNNING -> FINISHED/FAILED, blocking types, pick and drop of a
real object, charging at a charger, pause, cancel, initPosition, newBaseRequest, factsheet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimObject
from fleetsim.interfaces.vda5050 import Action, Order
from fleetsim.interfaces.vda5050.factsheet import Factsheet, factsheet_of
from fleetsim.interfaces.vda5050.messages import parse
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle
from fleetsim.objects import ShapeParams, SimObjectSpawnParams
from fleetsim.site import Site

from ..conftest import make_sim
from .helpers import HEADER, straight

DT = 0.1


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=DT, collision_narrowphase="aabb") as s:
        yield s


def action(kind: str, action_id: str, blocking: str = "HARD", **params: Any) -> Action:
    return Action.model_validate(
        {
            "actionType": kind,
            "actionId": action_id,
            "blockingType": blocking,
            "actionParameters": [{"key": k, "value": v} for k, v in params.items()],
        }
    )


def with_actions(order: Order, **at: list[Action]) -> Order:
    """Put actions on nodes (by nodeId) or edges (by edgeId) of `order`."""
    for item in [*order.nodes, *order.edges]:
        name = getattr(item, "node_id", None) or getattr(item, "edge_id", None)
        item.actions = at.get(str(name), [])
    return order


def amr(sim: MultiRobotSimulationCore, x: float = 0.0, y: float = 0.0) -> Agent:
    return Agent.from_urdf(
        "mobile_robot",
        Pose.from_xyz(x, y, 0),
        sim_core=sim,
        name="amr_0",
        motion_mode="differential",
        max_linear_vel=1.5,
    )


def run(
    sim: MultiRobotSimulationCore,
    vehicle: Vehicle,
    steps: int,
    until: Any = None,
    watch: Any = None,
) -> list[Any]:
    """Step both; collect `watch()` each step; stop early when `until()` holds."""
    seen = []
    for _ in range(steps):
        sim.step_once()
        vehicle.step(DT)
        if watch is not None:
            seen.append(watch())
        if until is not None and until():
            break
    return seen


def status(vehicle: Vehicle, action_id: str) -> str:
    return vehicle.actions[action_id].action_status.value


def test_pick_and_drop_a_real_object_with_blocking_actions(
    sim: MultiRobotSimulationCore,
) -> None:
    box = SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=ShapeParams(half_extents=(0.2, 0.2, 0.2)),
            initial_pose=Pose.from_xyz(3.0, 0.0, 0.2),
            pickable=True,
            name="tote_7",
        ),
        sim_core=sim,
    )
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    order = with_actions(
        straight(["n0", "n1", "n2"], released=3),
        n1=[action("pick", "p1", "HARD", loadType="tote")],
        n2=[action("drop", "d1", "SOFT")],
    )
    assert vehicle.take_order(order)
    assert status(vehicle, "p1") == "WAITING" and status(vehicle, "d1") == "WAITING"
    trace = run(
        sim,
        vehicle,
        400,
        until=lambda: status(vehicle, "d1") == "FINISHED",
        watch=lambda: (status(vehicle, "p1"), robot.get_pose().position[0], robot.is_moving),
    )
    pick = [s for s, _, _ in trace]
    firsts = [s for k, s in enumerate(pick) if k == 0 or pick[k - 1] != s]
    assert firsts == ["WAITING", "INITIALIZING", "RUNNING", "FINISHED"]
    # while the HARD pick ran the vehicle stood at n1 (x = 3), and it took its 2 s
    at_work = [(x, moving) for s, x, moving in trace if s in ("INITIALIZING", "RUNNING")]
    assert all(abs(x - 3.0) < 0.26 and not moving for x, moving in at_work)
    assert len(at_work) == pytest.approx(2.0 / DT + 1, abs=1)
    state = vehicle.state(sim.sim_time)
    assert state.loads == [] and vehicle.book.last_node_id == "n2"
    assert box.attached_to is None
    x, _, z = box.get_pose().position
    assert x == pytest.approx(6.0, abs=0.3) and z == pytest.approx(0.2)  # put down at n2


def test_loads_are_reported_while_carried_and_a_second_pick_fails(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    order = with_actions(
        straight(["n0", "n1"], released=2),
        n0=[action("pick", "p1", loadId="L-1", loadType="pallet")],
        n1=[action("pick", "p2"), action("drop", "d1", loadId="L-9")],
    )
    assert vehicle.take_order(order)
    run(sim, vehicle, 30, until=lambda: status(vehicle, "p1") == "FINISHED")
    (load,) = vehicle.state(sim.sim_time).loads or []
    assert load.load_id == "L-1" and load.load_type == "pallet"  # no object there: recorded
    run(sim, vehicle, 300, until=lambda: status(vehicle, "d1") in ("FINISHED", "FAILED"))
    assert status(vehicle, "p2") == "FAILED" and status(vehicle, "d1") == "FAILED"
    assert "already carries load 'L-1'" in (vehicle.actions["p2"].result_description or "")
    assert "carries no load 'L-9'" in (vehicle.actions["d1"].result_description or "")
    errors = vehicle.state(sim.sim_time).errors
    assert {e.error_type for e in errors} == {"actionError"}
    assert len(vehicle.state(sim.sim_time).loads or []) == 1  # still carried


def test_none_blocking_actions_let_the_vehicle_drive_and_hard_ones_run_alone(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    order = with_actions(
        straight(["n0", "n1", "n2"], released=3),
        n0n1=[action("wait", "e1", "NONE", duration=2.0)],
        n1=[
            action("wait", "s1", "SOFT", duration=1.0),
            action("wait", "h1", "HARD", duration=1.0),
            action("wait", "z1", "NONE", duration=0.5),
        ],
    )
    assert vehicle.take_order(order)
    trace = run(
        sim,
        vehicle,
        400,
        until=lambda: vehicle.book.idle and not robot.is_moving,
        watch=lambda: ({k: status(vehicle, k) for k in ("e1", "s1", "h1", "z1")}, robot.is_moving),
    )
    edge_running_moving = [m for s, m in trace if s["e1"] == "RUNNING"]
    assert edge_running_moving and all(edge_running_moving)  # NONE: drove on while it ran
    for s, moving in trace:
        if s["s1"] in ("INITIALIZING", "RUNNING") or s["h1"] in ("INITIALIZING", "RUNNING"):
            assert not moving  # SOFT and HARD: no driving
        if s["h1"] in ("INITIALIZING", "RUNNING"):
            assert s["s1"] == "FINISHED" and s["z1"] == "WAITING"  # HARD runs alone
    assert {status(vehicle, k) for k in ("e1", "s1", "h1", "z1")} == {"FINISHED"}
    assert vehicle.book.last_node_id == "n2"


def test_unknown_or_misplaced_actions_reject_the_order(sim: MultiRobotSimulationCore) -> None:
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    bad = with_actions(straight(["n0", "n1"], released=2), n1=[action("dance", "x1")])
    assert not vehicle.take_order(bad)
    error = vehicle.state(0.0).errors[-1]
    assert error.error_type == "orderError" and "unknown action 'dance'" in str(
        error.error_description
    )
    on_edge = with_actions(straight(["n0", "n1"], released=2), n0n1=[action("pick", "x2")])
    assert not vehicle.take_order(on_edge)
    assert "'pick' is not a EDGE action" in str(vehicle.state(0.0).errors[-1].error_description)
    assert vehicle.book.idle and not robot.is_moving  # nothing was driven


def test_charging_only_on_a_charger_and_pause_holds_actions(
    sim: MultiRobotSimulationCore,
) -> None:
    nodes = [
        {"name": "dock", "x": 0.0, "y": 0.0, "charger": True},
        {"name": "n1", "x": 3.0, "y": 0.0},
    ]
    sim.set_site(Site.from_graph(nodes, [{"from": "dock", "to": "n1", "bidirectional": True}]))
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics(), sim.site)
    vehicle.work.start([action("startCharging", "c1")])
    run(sim, vehicle, 30, until=lambda: status(vehicle, "c1") == "FINISHED")
    assert vehicle.state(0.0).battery_state.charging is True
    vehicle.work.start([action("wait", "w1", duration=1.0)])
    run(sim, vehicle, 3)
    assert status(vehicle, "w1") == "RUNNING"
    vehicle.paused = True
    run(sim, vehicle, 30)
    assert status(vehicle, "w1") == "PAUSED"  # held: its second does not run out
    vehicle.paused = False
    run(sim, vehicle, 30, until=lambda: status(vehicle, "w1") == "FINISHED")
    assert status(vehicle, "w1") == "FINISHED"
    robot.set_pose(Pose.from_xyz(3.0, 0.0, 0.0))
    vehicle.work.start([action("startCharging", "c2")])
    run(sim, vehicle, 5)
    assert status(vehicle, "c2") == "FAILED"
    assert "nearest, 'dock', is 3.00 m away" in str(vehicle.actions["c2"].result_description)


def test_cancel_fails_open_actions_and_init_position_moves_an_idle_vehicle(
    sim: MultiRobotSimulationCore,
) -> None:
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    order = with_actions(
        straight(["n0", "n1"], released=2),
        n0=[action("wait", "w1", duration=5.0)],
        n1=[action("drop", "d1")],
    )
    assert vehicle.take_order(order)
    run(sim, vehicle, 5)
    init = action("initPosition", "i1", x=4.0, y=-1.0, theta=1.0, lastNodeId="n7")
    assert "refused while driving order 'o1'" in str(vehicle.init_position(init))
    assert vehicle.cancel()
    assert status(vehicle, "w1") == "FAILED" and status(vehicle, "d1") == "FAILED"
    assert vehicle.actions["w1"].result_description == "order cancelled"
    assert vehicle.init_position(init) is None
    pose = robot.get_pose()
    assert pose.position[:2] == pytest.approx((4.0, -1.0)) and pose.yaw == pytest.approx(1.0)
    assert vehicle.state(0.0).last_node_id == "n7"
    bad = action("initPosition", "i2", x="east", y=0, theta=0)
    assert "x must be" in str(vehicle.init_position(bad)).replace("parameters ", "")


def test_new_base_request_near_the_end_of_the_base(sim: MultiRobotSimulationCore) -> None:
    robot = amr(sim)
    vehicle = Vehicle(robot, Topics())
    assert vehicle.take_order(straight(["n0", "n1", "n2", "n3"], released=3))
    trace = run(
        sim,
        vehicle,
        300,
        until=lambda: vehicle.book.last_node_id == "n2",
        watch=lambda: (robot.get_pose().position[0], vehicle.state(0.0).new_base_request),
    )
    asked = [x for x, wants in trace if wants]
    assert trace[0][1] is False  # not at the start of a 6 m base
    assert min(asked) == pytest.approx(6.0 - 3.0 * 1.5, abs=0.2)  # 3 s before its end at 1.5 m/s
    assert trace[-1][1] is True  # at the decision point with a horizon waiting
    assert vehicle.take_order(straight(["n2", "n3"], released=2, first_seq=4, update=1))
    assert vehicle.state(0.0).new_base_request is False  # no horizon left


def test_factsheet_from_the_robot(sim: MultiRobotSimulationCore) -> None:
    robot = amr(sim)
    header = {
        "header_id": 0,
        "timestamp": HEADER["timestamp"],
        "version": "2.0.0",
        "manufacturer": "fleetsim",
        "serial_number": "amr_0",
    }
    sheet = factsheet_of(robot, header, state_interval=1.0)
    out = json.loads(sheet.to_json())
    assert out["typeSpecification"]["agvKinematic"] == "DIFF"
    assert out["physicalParameters"]["speedMax"] == pytest.approx(1.5)
    assert 0.1 < out["physicalParameters"]["width"] < 2.0
    actions = {a["actionType"]: a["actionScopes"] for a in out["protocolFeatures"]["agvActions"]}
    assert actions["pick"] == ["NODE"] and "INSTANT" in actions["cancelOrder"]
    assert "EDGE" in actions["wait"] and "dance" not in actions
    assert out["protocolLimits"]["timing"]["defaultStateInterval"] == 1.0
    assert isinstance(parse(Factsheet, json.dumps(out), "factsheet"), Factsheet)
