"""The leaves not exercised elsewhere, each on real bodies: a robot picks a named crate and
drops it where it stands, follows a route; a person follows a route, waits for a door to be
opened; conditions on a place, a free place and people near."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim import Pose, SimObject, SimObjectSpawnParams
from fleetsim.behavior import Behaviors
from fleetsim.objects import ShapeParams

from .test_run import robot, run_until_done, simulation, tree

pytest.importorskip("behaviortreepy", reason="behaviour trees need fleetsim[bt]")


def test_a_robot_picks_a_named_crate_carries_it_and_drops_it_where_it_stands() -> None:
    mission = tree("""<Sequence>
      <Pick object="crate"/>
      <FollowRoute places="n4;n6"/>
      <Drop/>
    </Sequence>""")
    with simulation() as sim:
        amr = robot(sim)
        params = SimObjectSpawnParams(visual_shape=ShapeParams(half_extents=(0.15, 0.15, 0.15)),
                                      initial_pose=Pose.from_xyz(3.0, 0.0, 0.4), pickable=True,
                                      name="crate")  # fmt: skip
        crate = SimObject.from_params(params, sim_core=sim)
        trees = Behaviors(sim)
        trees.add_robot(amr, mission)
        carried: list[bool] = []
        sim.on("post_step", lambda *_: carried.append(crate.is_attached()))
        [done] = run_until_done(sim, 1, 2000)
        assert done["status"] == "success", trees.notes
        assert any(carried) and not crate.is_attached()
        assert amr.get_pose().x == pytest.approx(12.0, abs=0.1)  # (n6)
        assert abs(crate.get_pose().x - 12.0) < 1.0  # (put down where the robot stood)


def test_a_missing_crate_fails_the_leaf_with_its_reason() -> None:
    with simulation() as sim:
        trees = Behaviors(sim)
        trees.add_robot(robot(sim), tree('<Pick object="crat"/>'))
        [done] = run_until_done(sim, 1, 20)
        assert done["status"] == "failure" and "no object 'crat'" in trees.notes[-1]


def test_a_person_follows_a_route_and_the_place_conditions_hold_there() -> None:
    walk = tree("""<Sequence>
      <FollowRoute places="n3;n5"/>
      <AtPlace place="n5"/>
      <Inverter><AtPlace place="n3"/></Inverter>
      <PlaceFree place="n9" radius="1"/>
      <Inverter><PlaceFree place="n6" radius="1.5"/></Inverter>
      <PersonNear distance="3"/>
      <Leave/>
    </Sequence>""")
    with simulation() as sim:
        trees = Behaviors(sim)
        ids = sim.people.add(np.array([[0.0, 0.0], [12.0, 0.5]]), [np.array([[0.0, 0.0]]),
                             np.array([[12.0, 0.5]])], np.array([1.0, 1.0]))  # fmt: skip
        sim.people.staying.add(int(ids[1]))  # (a second person standing by n6)
        trees.add_person(int(ids[0]), walk, at="n0")
        [done] = run_until_done(sim, 1, 400)
        assert done["status"] == "success", trees.notes
        assert 9.5 < done["time"] < 12.5  # 10 m at 1 m/s, then the conditions at once


def test_a_person_waits_until_a_door_is_opened() -> None:
    from fleetsim.scenario import build, load_scenario

    built = build(load_scenario("hospital", ["plugins=[]"]))  # (its robots stand)
    with built.sim as sim:
        doors = sim.doors
        name = next(iter(doors.doors))
        door = doors.doors[name]
        graph = sim.site.graph
        here = next(n for k, n in enumerate(graph.names)
                    if graph.level_names[graph.level[k]] == door.level)  # fmt: skip
        trees = Behaviors(sim)
        spot = graph.xy[graph.node(here)][None]
        [person] = sim.people.add(spot, [spot], level=door.level)
        trees.add_person(int(person), tree(f'<WaitForDoor door="{name}"/>'), at=here)
        for _ in range(30):
            sim.step_once()
        assert trees.owners[0].status == "running"  # (the door is shut)
        opened = sim.sim_time
        doors.open(name)
        [done] = run_until_done(sim, 1, 200)
        assert done["status"] == "success" and done["time"] > opened
        assert doors.is_open(name)
