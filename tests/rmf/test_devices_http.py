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
from ..site.test_doors import HOUSE
from ..site.test_lifts import TOWER
from .test_server import Served


def serve(tmp_path: Path, text: str) -> Iterator[Served]:
    path = tmp_path / "site.building.yaml"
    path.write_text(text)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 3, 0), sim_core=sim,
                                name="tinyRobot1", motion_mode="differential")  # fmt: skip
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
    request = {"door_name": "main_door", "requester_id": "door_adapter",
               "requested_mode": {"value": 2}}  # fmt: skip
    status, got = house.call("POST", "door_request", request)
    assert status == 200 and got["success"], got
    house.step_until(lambda: door_mode(house) == 1)  # moving
    house.step_until(lambda: door_mode(house) == 2)  # open
    assert house.sim.doors["main_door"].wanted_by == {"door_adapter"}
    house.call("POST", "door_request", {**request, "requested_mode": {"value": 0}})
    house.step_until(lambda: door_mode(house) == 0)
    for bad, said in (({**request, "door_name": "front"}, "no door 'front'"),
                      ({**request, "requested_mode": {"value": 1}}, "requested_mode 1"),
                      ({**request, "requested_mode": {"value": 7}}, "")):  # fmt: skip
        status, got = house.call("POST", "door_request", bad)
        assert status == 200 and not got["success"] and said in got["msg"], got


def test_a_lift_request_brings_the_cabin_and_ends_the_session(tower: Served) -> None:
    def lift() -> dict[str, object]:
        _, got = tower.call("GET", "lift_states")
        state: dict[str, object] = got["data"][0]
        return state

    assert lift()["current_floor"] == "L1" and lift()["available_floors"] == ["L1", "L2", "L3"]
    request = {"lift_name": "Lift1", "session_id": "fleet_a", "request_type": 1,
               "destination_floor": "L3", "door_state": 2}  # fmt: skip
    status, got = tower.call("POST", "lift_request", request)
    assert status == 200 and got["success"], got
    tower.step_until(lambda: lift()["motion_state"] == 1)  # going up
    tower.step_until(lambda: lift()["current_floor"] == "L3" and lift()["door_state"] == 2)
    assert lift()["session_id"] == "fleet_a"
    tower.call("POST", "lift_request", {**request, "request_type": 0})
    tower.step_until(lambda: lift()["session_id"] == "" and lift()["door_state"] == 0)
    status, got = tower.call("POST", "lift_request", {**request, "destination_floor": "L9"})
    assert status == 200 and not got["success"] and "not 'L9'" in got["msg"]


def test_status_reports_each_robots_level_as_its_map(tmp_path: Path) -> None:
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        robots = [Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 3, z), sim_core=sim,
                                  name=f"bot{k}", motion_mode="differential")
                  for k, z in enumerate((0.0, 4.0, 8.0))]  # fmt: skip
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
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim,
                                name="bot", motion_mode="differential")  # fmt: skip
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

            done = served.step_until(lambda: status()["last_completed_request"] == 7 and status(),
                                     steps=3000)  # fmt: skip
            assert done["map_name"] == "L3"
            assert robot.get_pose().position == pytest.approx((4, 0, 8.0), abs=0.1)
            assert sim.lifts["Lift1"].trips >= 1 and sim.lifts["Lift1"].session is None
            body = {"map_name": "B9", "destination": {"x": 4, "y": 0, "yaw": 0}}
            _, got = served.call("POST", "navigate?robot_name=bot&cmd_id=8", body)
            assert not got["success"] and "maps are L1, L2, L3" in got["msg"]
        fleet.stop_serving()
