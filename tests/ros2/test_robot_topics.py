"""Each robot's transforms, static transforms and battery, and the fleet's markers, heard by
real rclpy in another process."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.interfaces.ros2 import Ros2Bridge, Ros2Settings
from fleetsim.site import Site

from .conftest import Client
from .test_bridge import fleet


def test_transforms_battery_and_markers(ros_domain: int) -> None:
    """r0 driven by cmd_vel: every tf (map -> r0/odom -> r0/base_footprint) has the pose the
    simulation had at its stamp (to 1 mm); its lidar's mount on tf_static, latched; its
    battery drains while it drives, unmodelled fields NaN; the site's lanes and the robots as
    markers."""
    client = Client(ros_domain, {"seconds": 7, "tf": ["r0"], "tf_static": ["r0"],
                                 "battery": ["r0"], "markers": True,
                                 "cmd_vel": {"r0": [1.0, 4.0, 0.8, 0.0, 0.3]}})  # fmt: skip
    truth: dict[int, tuple[float, ...]] = {}
    nodes = [{"name": n, "x": x, "y": 0.0} for n, x in (("a", 0.0), ("b", 5.0), ("c", 9.0))]
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        sim.set_site(Site.from_graph(nodes, [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]))
        robots = fleet(sim, 3)
        robots[0].add_lidar(beams=8, mount=(0.1, 0.0, 0.3, math.pi / 2))

        def keep(s: MultiRobotSimulationCore, dt: float) -> None:
            pose = robots[0].get_pose()
            truth[s.step_count] = (*pose.position, pose.orientation[2], pose.orientation[3])

        sim.on("post_step", keep)
        settings = Ros2Settings(domain_id=ros_domain, battery_hz=2.0, markers_hz=2.0)
        with Ros2Bridge(sim, robots, settings):
            sim.run_simulation(8.0)
    heard = client.result()["heard"]
    tf = heard["tf/r0"]
    assert len(tf) > 40
    for (stamp, *first), (stamp2, parent, child, *numbers) in tf:
        assert first == ["map", "r0/odom", 0.0, 0.0, 0.0, 0.0, 1.0] and stamp2 == stamp
        assert (parent, child) == ("r0/odom", "r0/base_footprint")
        np.testing.assert_allclose(numbers, truth[round(stamp / 0.1)], atol=1e-3)
    assert max(t[1][3] for t in tf) > 1.0  # (it moved)
    ((_, parent, child, x, y, z, qz, qw),) = heard["tf_static/r0"][0]
    assert (parent, child, x, y, z) == ("r0/base_footprint", "r0/laser", 0.1, 0.0, 0.3)
    assert (qz, qw) == pytest.approx((math.sin(math.pi / 4), math.cos(math.pi / 4)))
    battery = heard["battery/r0"]
    charges = [b[1] for b in battery]
    assert len(battery) > 8 and charges == sorted(charges, reverse=True) and charges[-1] < 1.0
    assert all(math.isnan(b[2]) for b in battery)  # (voltage: not modelled)
    (site,) = heard["/site/markers"]
    assert ["lanes", 5, 4] in site  # (a line list: two lanes, two points each)
    fleet_markers = heard["/fleet/markers"]
    assert len(fleet_markers) > 8
    counts = {ns: n for ns, _, n in fleet_markers[-1]}
    assert counts["robots"] + counts["robots_resting"] == 3


def test_bare_frames_and_no_map_to_odom(ros_domain: int) -> None:
    client = Client(ros_domain, {"seconds": 4, "tf": ["r0"], "odom": ["r0"]})
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        robots = fleet(sim, 1)
        settings = Ros2Settings(domain_id=ros_domain, frame_prefix=False, map_to_odom=False)
        with Ros2Bridge(sim, robots, settings):
            sim.run_simulation(5.0)
    heard = client.result()["heard"]
    assert heard["tf/r0"] and all(
        [(p, c) for _, p, c, *_ in message] == [("odom", "base_footprint")]
        for message in heard["tf/r0"]
    )
    assert heard["odom/r0"][0][4] == "base_footprint"


def test_fleet_wide_topics_alone(ros_domain: int, caplog: pytest.LogCaptureFixture) -> None:
    """`robot_topics=False`: /fleet/poses and the markers, no robot's own topics, no errors."""
    client = Client(ros_domain, {"seconds": 4, "odom": ["r0"], "markers": True})
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=1.0)) as sim:
        robots = fleet(sim, 2)
        settings = Ros2Settings(domain_id=ros_domain, robot_topics=False)
        with Ros2Bridge(sim, robots, settings) as bridge:
            sim.run_simulation(5.0)
            assert bridge.navigation is not None and not bridge.navigation.servers
    heard = client.result()["heard"]
    assert heard["odom/r0"] == [] and len(heard["/fleet/markers"]) >= 3
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
