"""Doors and lifts commanded over HTTP beside RMF's fleet-manager API (uvicorn on 127.0.0.1, a
free port), in the shape of Open-RMF's DoorRequest / DoorState and LiftRequest / LiftState."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetsim import Agent, Pose
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.server import RmfServer, make_app
from fleetsim.site import Site

from ..conftest import make_sim
from ..site.buildings import HOUSE, TOWER
from .helpers import Served


def serve(tmp_path: Path, text: str) -> Iterator[Served]:
    path = tmp_path / "site.building.yaml"
    path.write_text(text)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        robot = Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(0, 3, 0),
            sim_core=sim,
            name="tinyRobot1",
            motion_mode="differential",
        )
        fleet = RmfFleet(sim, [robot], map_name="L1").start()
        with RmfServer(make_app(fleet)) as server:
            yield Served(sim, fleet, server)
        fleet.stop_serving()


@pytest.fixture
def house(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, HOUSE)


@pytest.fixture
def tower(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, TOWER)


def door_mode(served: Served) -> int:
    _, got = served.call("GET", "door_states")
    return int(got["data"][0]["current_mode"]["value"])


def test_a_door_request_opens_and_closes_the_door(house: Served) -> None:
    assert door_mode(house) == 0  # closed
    request = {
        "door_name": "main_door",
        "requester_id": "door_adapter",
        "requested_mode": {"value": 2},
    }
    status, got = house.call("POST", "door_request", request)
    assert status == 200 and got["success"], got
    house.step_until(lambda: door_mode(house) == 1)  # moving
    house.step_until(lambda: door_mode(house) == 2)  # open
    assert house.sim.doors["main_door"].wanted_by == {"door_adapter"}
    house.call("POST", "door_request", {**request, "requested_mode": {"value": 0}})
    house.step_until(lambda: door_mode(house) == 0)
    for bad, said in (
        ({**request, "door_name": "front"}, "no door 'front'"),
        ({**request, "requested_mode": {"value": 1}}, "requested_mode 1"),
        ({**request, "requested_mode": {"value": 7}}, ""),
    ):
        status, got = house.call("POST", "door_request", bad)
        assert status == 200 and not got["success"] and said in got["msg"], got


def test_a_lift_request_brings_the_cabin_and_ends_the_session(tower: Served) -> None:
    def lift() -> dict[str, object]:
        _, got = tower.call("GET", "lift_states")
        state: dict[str, object] = got["data"][0]
        return state

    assert lift()["current_floor"] == "L1" and lift()["available_floors"] == ["L1", "L2", "L3"]
    request = {
        "lift_name": "Lift1",
        "session_id": "fleet_a",
        "request_type": 1,
        "destination_floor": "L3",
        "door_state": 2,
    }
    status, got = tower.call("POST", "lift_request", request)
    assert status == 200 and got["success"], got
    tower.step_until(lambda: lift()["motion_state"] == 1)  # going up
    tower.step_until(lambda: lift()["current_floor"] == "L3" and lift()["door_state"] == 2)
    assert lift()["session_id"] == "fleet_a"
    tower.call("POST", "lift_request", {**request, "request_type": 0})
    tower.step_until(lambda: lift()["session_id"] == "" and lift()["door_state"] == 0)
    status, got = tower.call("POST", "lift_request", {**request, "destination_floor": "L9"})
    assert status == 200 and not got["success"] and "not 'L9'" in got["msg"]


def test_lift_states_carry_every_field_of_rmf_lift_state(tower: Served) -> None:
    """Every field of rmf_lift_msgs/LiftState, and its modes: human while no session holds
    the lift, AGV in a session asked with request type 1 (AGV mode), human again in one asked
    with type 2; an empty session_id is refused with a reason."""

    def lift() -> dict[str, object]:
        _, got = tower.call("GET", "lift_states")
        state: dict[str, object] = got["data"][0]
        return state

    fields = {"lift_time", "lift_name", "available_floors", "current_floor"}
    fields |= {"destination_floor", "door_state", "motion_state", "available_modes"}
    fields |= {"current_mode", "session_id"}
    assert set(lift()) == fields
    assert lift()["available_modes"] == [1, 2] and lift()["current_mode"] == 1
    request = {
        "lift_name": "Lift1",
        "session_id": "fleet_a",
        "request_type": 1,
        "destination_floor": "L2",
        "door_state": 2,
    }
    tower.call("POST", "lift_request", request)
    tower.step_until(lambda: lift()["session_id"] == "fleet_a")
    assert lift()["current_mode"] == 2  # AGV
    tower.call("POST", "lift_request", {**request, "session_id": "people", "request_type": 2})
    tower.call("POST", "lift_request", {**request, "request_type": 0})
    tower.step_until(lambda: lift()["session_id"] == "people")
    assert lift()["current_mode"] == 1  # human
    tower.sim.lifts.set_in_service("Lift1", False)
    assert lift()["current_mode"] == 4  # offline
    for empty in ("", "  "):
        status, got = tower.call("POST", "lift_request", {**request, "session_id": empty})
        assert status == 200 and not got["success"] and "session_id is empty" in got["msg"], got


def test_status_reports_each_robots_level_as_its_map(tmp_path: Path) -> None:
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        robots = [
            Agent.from_urdf(
                "mobile_robot",
                Pose.from_xyz(0, 3, z),
                sim_core=sim,
                name=f"bot{k}",
                motion_mode="differential",
            )
            for k, z in enumerate((0.0, 4.0, 8.0))
        ]
        fleet = RmfFleet(sim, robots, map_name="L1").start()
        with RmfServer(make_app(fleet)) as server:
            served = Served(sim, fleet, server)
            served.step_until(lambda: True)
            _, got = served.call("GET", "status")
            maps = {r["robot_name"]: r["map_name"] for r in got["data"]["all_robots"]}
            assert maps == {"bot0": "L1", "bot1": "L2", "bot2": "L3"}
            body = {"map_name": "B2", "destination": {"x": 4, "y": 0, "yaw": 0}}
            _, got = served.call("POST", "navigate?robot_name=bot1&cmd_id=1", body)
            assert not got["success"] and "bot1 is on 'L2'" in got["msg"]
        fleet.stop_serving()


def test_a_navigate_to_another_map_rides_the_lift(tmp_path: Path) -> None:
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        robot = Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(0, 0, 0),
            sim_core=sim,
            name="bot",
            motion_mode="differential",
        )
        fleet = RmfFleet(sim, [robot], map_name="L1").start()
        with RmfServer(make_app(fleet)) as server:
            served = Served(sim, fleet, server)
            body = {"map_name": "L3", "destination": {"x": 4, "y": 0, "yaw": 0}}
            _, got = served.call("POST", "navigate?robot_name=bot&cmd_id=7", body)
            assert got["success"], got

            def status() -> dict[str, object]:
                _, got = served.call("GET", "status?robot_name=bot")
                data: dict[str, object] = got["data"]
                return data

            done = served.step_until(
                lambda: status()["last_completed_request"] == 7 and status(), steps=3000
            )
            assert done["map_name"] == "L3"
            assert robot.get_pose().position == pytest.approx((4, 0, 8.0), abs=0.1)
            assert sim.lifts["Lift1"].trips >= 1 and sim.lifts["Lift1"].session is None
            body = {"map_name": "B9", "destination": {"x": 4, "y": 0, "yaw": 0}}
            _, got = served.call("POST", "navigate?robot_name=bot&cmd_id=8", body)
            assert not got["success"] and "maps are L1, L2, L3" in got["msg"]
        fleet.stop_serving()


def test_a_closed_door_holds_a_navigating_robot_until_it_is_opened(house: Served) -> None:
    """`--doors requests`: a navigate through a closed door stops short of it and waits (its
    status says replan; held past the stall time, a stall naming the door) until a door
    request opens it; then it drives through."""
    fleet, robot = house.fleet, house.fleet.robots[0]
    fleet.doors.stall_after_s = 10.0

    def completed() -> int:
        _, got = house.call("GET", "status?robot_name=tinyRobot1")
        return int(got["data"]["last_completed_request"] or 0)

    house.call(
        "POST",
        "navigate?robot_name=tinyRobot1&cmd_id=1",
        {"destination": {"x": 3, "y": 0, "yaw": 0}},
    )
    house.step_until(lambda: completed() == 1, steps=600)
    house.call(
        "POST",
        "navigate?robot_name=tinyRobot1&cmd_id=2",
        {"destination": {"x": 9, "y": 0, "yaw": 0}},
    )
    farthest = [0.0]
    for _ in range(250):  # 25 s
        house.sim.step_once()
        farthest[0] = max(farthest[0], robot.get_pose().x)
    assert farthest[0] < 6 - 0.2, farthest  # never into the doorway
    assert completed() == 1 and fleet.doors.waiting_at(0) == "main_door"
    _, got = house.call("GET", "status?robot_name=tinyRobot1")
    assert got["data"]["replan"] is True
    assert [(s.robot, s.door) for s in fleet.doors.stalls] == [("tinyRobot1", "main_door")]
    request = {"door_name": "main_door", "requester_id": "adapter", "requested_mode": {"value": 2}}
    house.call("POST", "door_request", request)
    house.step_until(lambda: completed() == 2, steps=600)
    assert robot.get_pose().x == pytest.approx(9, abs=0.1)
    assert fleet.doors.stalls[0].ended is not None
    assert house.sim.collision_counts["robot-structure"] == 0
