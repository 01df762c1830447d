"""Open-RMF robots stay on their level's floor: a navigate on an upper level is driven on that
level (not on the ground floor, where another robot stands at the same x, y), and a navigate to
another level never drops the robot below the floor it starts on. Checked every step, through
the fleet-manager API over HTTP (uvicorn on 127.0.0.1, a free port)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetsim import Agent, MultiRobotSimulationCore, Pose
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.server import RmfServer, make_app
from fleetsim.site import Site

from ..conftest import make_sim
from ..site.buildings import ELEVATIONS, TOWER
from .helpers import Served

MODES = pytest.mark.parametrize("mode", ["omnidirectional", "differential"])


@contextlib.contextmanager
def tower_sim(tmp_path: Path) -> Iterator[MultiRobotSimulationCore]:
    """A simulation on the three-level tower (floors 4 m apart, one lift)."""
    path = tmp_path / "tower.building.yaml"
    path.write_text(TOWER)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_building(path))
        yield sim


@MODES
def test_a_navigate_on_each_level_is_driven_on_that_levels_floor(tmp_path: Path, mode: str) -> None:
    with tower_sim(tmp_path) as sim:
        # one robot a level, all at (0, 3); and a robot on L1 standing where the others go
        robots = [
            Agent.from_urdf(
                "mobile_robot",
                Pose.from_xyz(0, 3, z),
                sim_core=sim,
                name=f"bot_{level}",
                motion_mode=mode,
            )
            for level, z in ELEVATIONS.items()
        ]
        Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(4, 0, 0),
            sim_core=sim,
            name="below",
            motion_mode="differential",
        )
        fleet = RmfFleet(sim, robots, map_name="L1").start()
        heights: dict[str, set[float]] = {r.name: set() for r in robots}
        sim.register_callback(
            lambda *_: [heights[r.name].add(round(r.get_pose().z, 6)) for r in robots]
        )
        with RmfServer(make_app(fleet)) as server:
            served = Served(sim, fleet, server)
            for k, level in enumerate(ELEVATIONS):
                if level == "L1":
                    continue  # (the robot below stands at L1's goal)
                body = {"map_name": level, "destination": {"x": 4, "y": 0, "yaw": 0}}
                _, got = served.call("POST", f"navigate?robot_name=bot_{level}&cmd_id={k}", body)
                assert got["success"], got

            def done() -> bool:
                _, got = served.call("GET", "status")
                finished = {
                    r["robot_name"]: r["last_completed_request"] for r in got["data"]["all_robots"]
                }
                return finished["bot_L2"] == 1 and finished["bot_L3"] == 2

            served.step_until(done, steps=600)
            for level, z in ELEVATIONS.items():
                robot = robots[list(ELEVATIONS).index(level)]
                assert heights[robot.name] == {z}, (robot.name, heights[robot.name])
                if level != "L1":
                    assert robot.get_pose().position == pytest.approx((4, 0, z), abs=0.1)
            assert sim.collision_counts["robot-robot"] == 0  # (the robot below: never met)
        fleet.stop_serving()


@MODES
def test_a_navigate_to_another_level_never_drops_below_the_start(tmp_path: Path, mode: str) -> None:
    with tower_sim(tmp_path) as sim:
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(0, 3, 4.0), sim_core=sim, name="bot", motion_mode=mode
        )
        fleet = RmfFleet(sim, [robot], map_name="L1").start()
        lowest = [4.0]
        sim.register_callback(lambda *_: lowest.__setitem__(0, min(lowest[0], robot.get_pose().z)))
        with RmfServer(make_app(fleet)) as server:
            served = Served(sim, fleet, server)
            body = {"map_name": "L3", "destination": {"x": 4, "y": 0, "yaw": 0}}
            _, got = served.call("POST", "navigate?robot_name=bot&cmd_id=3", body)
            assert got["success"], got

            def finished() -> bool:
                _, got = served.call("GET", "status?robot_name=bot")
                return bool(got["data"]["last_completed_request"] == 3)

            served.step_until(finished, steps=3000)
            assert lowest[0] == pytest.approx(4.0)
            assert robot.get_pose().position == pytest.approx((4, 0, 8.0), abs=0.1)
        fleet.stop_serving()
