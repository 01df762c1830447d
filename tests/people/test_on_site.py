"""People in a simulation (`sim.people`): they walk the site's graph among its walls and around
its robots, contacts are events, KPIs count them; reset and two simulations in one process."""

from __future__ import annotations

import numpy as np

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.site import Site


def warehouse_row() -> Site:
    """A 20 m aisle along y = 0 between two racks, nodes every 2 m."""
    nodes = [{"name": f"n{i}", "x": 2.0 * i, "y": 0.0} for i in range(11)]
    lanes = [{"from": f"n{i}", "to": f"n{i + 1}"} for i in range(10)]  # one way, east
    site = Site.from_graph(nodes, lanes)
    rack = [[10.0, 2.0, 0.5], [10.0, -2.0, 0.5]]
    site.obstacles.centres = np.array(rack)
    site.obstacles.half_extents = np.array([[10.0, 0.5, 0.5], [10.0, 0.5, 0.5]])
    site.obstacles.yaws = np.zeros(2)
    return site


def test_people_walk_the_graph_both_ways_around_a_robot_in_the_aisle() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, seed=3)) as sim:
        sim.set_site(warehouse_row())
        robot = Agent.from_params(AgentSpawnParams("mobile_robot", name="amr",
                                                   initial_pose=Pose.from_xyz(0.0, 0.0, 0.0)),
                                  sim)  # fmt: skip
        robot.set_goal(Pose.from_xyz(20.0, 0.0, robot.get_pose().z), align_orientation=False)
        people = sim.people
        west = people.route_between("n10", "n0")  # against the one-way lanes
        assert west[0].tolist() == [20.0, 0.0] and west[-1].tolist() == [0.0, 0.0]
        starts = np.array([[20.0, 0.5], [19.5, -0.4], [19.0, 0.0]])
        ids = people.add(starts, [west] * 3, speeds=np.array([1.0, 1.2, 1.4]))
        gaps, contacts = [], []
        sim.on("person_contact", lambda _sim, row: contacts.append(row))
        for _ in range(400):
            sim.step_once()
            if not len(people.positions):
                break
            robots, _ = people.robots()
            d = people.positions[:, None, :] - robots.centres[None, :, :]
            gaps.append(float((np.hypot(d[..., 0], d[..., 1]) - 0.2 - robots.radii).min()))
            assert (np.abs(people.positions[:, 1]) <= 1.5 - 0.2 + 1e-9).all()  # between racks
        kpis = people.kpis()
        assert kpis["people_added"] == 3 and kpis["people_arrived"] == len(ids)
        assert kpis["people_now"] == 0  # (at the end of their route they left)
        assert min(gaps) >= -1e-9 and not contacts and kpis["person_contacts"] == 0
        assert kpis["closest_person_gap_m"] is not None and kpis["closest_person_gap_m"] < 1.0
        assert sum(kpis["closest_gap_steps"].values()) > 0
        assert robot.get_pose().x > 15.0  # the robot drove through them


def test_a_person_pinned_against_a_wall_by_a_robot_is_a_contact() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        sim.set_site(warehouse_row())
        robot = Agent.from_params(AgentSpawnParams("mobile_robot", name="amr",
                                                   initial_pose=Pose.from_xyz(2.0, 0.3, 0.0)),
                                  sim)  # fmt: skip
        robot.set_goal(Pose.from_xyz(2.0, 1.4, robot.get_pose().z), align_orientation=False)
        sim.people.yield_rule = None  # (a robot that does not stop for people)
        sim.people.add(np.array([[2.0, 1.25]]), [np.array([[3.0, 1.25]])], np.array([0.05]))
        contacts: list[dict[str, object]] = []
        sim.on("person_contact", lambda _sim, row: contacts.append(row))
        for _ in range(40):
            sim.step_once()
        assert contacts and contacts[0]["robot"] == "amr" and contacts[0]["person"] == 0
        assert float(contacts[0]["gap"]) < 0  # type: ignore[arg-type]
        kpis = sim.people.kpis()
        assert kpis["person_contacts"] == len(contacts) == 1  # one contact, however long
        assert kpis["person_contact_steps"] > 5  # (pinned for many steps)
        assert sim.collision_counts["robot-person"] == 1  # the collision system's own report
        assert sim.collision_count == sim.collisions.started_count + 1


def test_reset_and_two_simulations_keep_their_own_people() -> None:
    a = MultiRobotSimulationCore(SimulationParams(timestep=0.1))
    b = MultiRobotSimulationCore(SimulationParams(timestep=0.1))
    with a, b:
        a.people.add(np.array([[0.0, 0.0], [0.0, 1.0]]), [np.array([[5.0, 0.0]])] * 2)
        b.people.add(np.zeros((1, 2)), [np.array([[0.0, -5.0]])])
        for _ in range(10):
            a.step_once()
            b.step_once()
        assert len(a.people.positions) == 2 and a.people.positions[:, 0].min() > 0.5
        assert b.people.positions[0, 1] < -0.5
        a.reset()
        assert len(a.people.positions) == 0 and a.people.kpis()["people_added"] == 0


def test_a_robot_without_safety_fields_slows_and_stops_for_a_person_ahead() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        sim.set_site(warehouse_row())
        robot = Agent.from_params(AgentSpawnParams("mobile_robot", name="amr",
                                                   initial_pose=Pose.from_xyz(0.0, 0.0, 0.0)),
                                  sim)  # fmt: skip
        z = robot.get_pose().z
        robot.set_goal(Pose.from_xyz(20.0, 0.0, z), align_orientation=False)
        # a person who dawdles in the aisle for 20 s, then walks off to the far end
        ids = sim.people.add(np.array([[8.0, 0.0]]), [np.array([[8.05, 0.0], [20.0, 1.0]])],
                             np.array([0.0025]))  # fmt: skip
        gaps, speeds = [], []
        for _ in range(200):
            sim.step_once()
            robots, _ = sim.people.robots()
            gaps.append(float(np.hypot(*(sim.people.positions[0] - robots.centres[0])) - 0.2
                              - robots.radii[0]))  # fmt: skip
            speeds.append(float(np.hypot(*robot.get_velocity()[0][:2])))
        kpis = sim.people.kpis()
        assert min(gaps) > 0.0 and kpis["person_contacts"] == 0
        assert speeds[-1] == 0.0 and kpis["robot_wait_for_people_s"] > 5.0
        assert kpis["robot_slowed_for_people_s"] > 0.0
        assert robot.get_pose().x < 8.0
        sim.people.crowd.v0[:] = 1.3  # it walks off: the robot drives on
        for _ in range(300):
            sim.step_once()
        assert robot.get_pose().x > 15.0 and len(ids) == 1


def test_lidars_see_people_and_safety_fields_stop_a_robot_for_one() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        amr = Agent.from_params(AgentSpawnParams(urdf_path="mobile_robot_lidar", name="amr"), sim)
        amr.set_safety_fields("auto")
        # a person all but standing in its way, 6 m ahead (1 mm/s toward a far point)
        sim.people.add(np.array([[6.0, 0.0]]), [np.array([[60.0, 0.0]])], np.array([0.001]))
        sim.step_once()
        ranges = np.concatenate([g.ranges.ravel() for g in sim.lidars.groups])
        seen = float(ranges[np.isfinite(ranges)].min())
        assert abs(seen - (6.0 - 0.2)) < 0.35  # the person (the lidar's mount: a little off)
        amr.set_goal(Pose.from_xyz(12.0, 0.0, amr.get_pose().z), align_orientation=False)
        for _ in range(200):
            sim.step_once()
        assert amr.safety_field_state == "protective"
        assert 6.0 - 0.2 - amr.get_pose().x > 0.1  # it stopped short of the person
        assert sim.people.kpis()["person_contacts"] == 0
        sim.people.remove(sim.people.crowd.ids)  # gone: the field clears, it drives on
        for _ in range(100):
            sim.step_once()
        assert amr.get_pose().x > 10.0
