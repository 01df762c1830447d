"""Faults on purpose: the same plan and seed give the same faults, each kind of fault has its
effect (and only while it lasts), every fault is an event and a row, and the faults that
happened, written out as a fixed schedule, happen again the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, MultiRobotSimulationCore, Pose
from fleetsim.agents import AgentSpawnParams
from fleetsim.devices import DoorMode
from fleetsim.faults import (
    DelayConfig,
    FaultEvent,
    FaultInjector,
    FaultPlan,
    FaultSchedule,
    RobotFaults,
    SiteFault,
)
from fleetsim.site import Site

from ..conftest import make_sim
from ..site.buildings import HOUSE, TOWER

NAMES = [f"amr_{k}" for k in range(6)]
PLAN = FaultPlan(
    robots=(
        RobotFaults("stop", rate_per_hour=30, duration=(5, 20)),
        RobotFaults("slowdown", rate_per_hour=12, duration=(10, 30), factor=0.4),
        RobotFaults("breakdown", at=(("amr_2", 50.0),), duration=(60, 60)),
        RobotFaults("jump", rate_per_hour=6, distance=1.5, robots=("amr_1", "amr_4")),
    ),
    seed=11,
)


def events(plan: FaultPlan, names: list[str], until: float = 3600.0) -> list[FaultEvent]:
    schedule = FaultSchedule(plan, names)
    return [e for t in np.arange(0.0, until, 0.5) for e in schedule.due(float(t))]


def test_the_same_plan_and_seed_give_the_same_faults() -> None:
    first = events(PLAN, NAMES)
    assert first == events(PLAN, NAMES) and len(first) > 60
    assert {e.kind for e in first} == {"stop", "slowdown", "breakdown", "jump"}
    assert [e.time for e in first] == sorted(e.time for e in first)
    fixed = [e for e in first if e.kind == "breakdown"]
    assert [(e.target, e.time, e.duration) for e in fixed] == [("amr_2", 50.0, 60.0)]
    assert {e.target for e in first if e.kind == "jump"} <= {"amr_1", "amr_4"}
    # a robot's faults do not depend on the others: more robots, the same faults for amr_0
    more = events(PLAN, [*NAMES, "amr_6", "amr_7"])
    assert [e for e in more if e.target == "amr_0"] == [e for e in first if e.target == "amr_0"]
    other = events(FaultPlan(PLAN.robots, seed=12), NAMES)
    assert [e for e in other if e.kind == "stop"] != [e for e in first if e.kind == "stop"]
    # about the rate asked for: 30 stops an hour per robot (a Poisson count: within 4 sigma)
    stops = sum(e.kind == "stop" for e in first)
    assert abs(stops - 6 * 30) < 4 * np.sqrt(6 * 30)


def test_bad_plans_are_refused() -> None:
    with pytest.raises(ConfigError, match="fault kind 'stall'"):
        RobotFaults("stall")
    with pytest.raises(ConfigError, match=r"duration must be \[min, max\]"):
        RobotFaults("stop", duration=(5, 1))
    with pytest.raises(ConfigError, match="robots the run does not have: amr_9"):
        FaultSchedule(FaultPlan((RobotFaults("stop", at=(("amr_9", 1.0),)),)), NAMES)


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as s:
        yield s


def driving(sim: MultiRobotSimulationCore, n: int = 2) -> list[Agent]:
    robots = [
        Agent.from_urdf(
            "mobile_robot",
            Pose.from_xyz(0, 3.0 * k, 0),
            sim_core=sim,
            name=f"amr_{k}",
            max_linear_vel=1.0,
        )
        for k in range(n)
    ]
    for k, robot in enumerate(robots):
        robot.set_goal(Pose.from_xyz(40, 3.0 * k, 0))
    return robots


def speeds(sim: MultiRobotSimulationCore, robots: list[Agent], seconds: float) -> np.ndarray:
    out = []
    for _ in range(round(seconds / sim.params.timestep)):
        sim.step_once()
        out.append([float(np.hypot(*r.get_velocity()[0][:2])) for r in robots])
    return np.array(out)


def test_stops_slowdowns_and_breakdowns_act_while_they_last(
    sim: MultiRobotSimulationCore,
) -> None:
    robots = driving(sim, 3)
    plan = FaultPlan(
        events=(
            FaultEvent(2.0, "stop", "amr_0", 4.0),
            FaultEvent(2.0, "slowdown", "amr_1", 4.0, 0.3),
            FaultEvent(2.0, "breakdown", "amr_2", 4.0),
        )
    )
    injector = FaultInjector(sim, robots, plan).attach()
    seen: list[tuple[str, str, str]] = []
    sim.on("fault_started", lambda _s, row: seen.append(("started", row["kind"], row["target"])))
    sim.on("fault_ended", lambda _s, row: seen.append(("ended", row["kind"], row["target"])))
    v = speeds(sim, robots, 2.0)
    assert v[-1].min() > 0.9  # all three at speed before
    v = speeds(sim, robots, 4.0)
    assert v[-15:, 0].max() < 1e-6 and v[-15:, 2].max() < 1e-6  # stopped, broken down
    assert v[-15:, 1].max() == pytest.approx(0.3, abs=1e-6)  # slowed to 0.3 of 1 m/s
    assert injector.broken.tolist() == [False, False, True]
    assert robots[0].fault_speed == 0.0 and robots[0].speed_override == 1.0  # not a hold
    v = speeds(sim, robots, 2.0)
    assert v[-1].min() > 0.9 and not injector.broken.any()  # driving on after
    assert robots[0].get_pose().x < robots[1].get_pose().x  # the stop cost more than the crawl
    assert seen == [
        (s, k, r)
        for s in ("started", "ended")  # (at one time: by kind)
        for k, r in (("breakdown", "amr_2"), ("slowdown", "amr_1"), ("stop", "amr_0"))
    ]
    assert injector.kpis()["faults"]["stop"] == 1 and injector.kpis()["faults_active"] == 0
    rows = injector.rows()
    assert rows[1] == {
        "time": 2.0,
        "kind": "slowdown",
        "target": "amr_1",
        "duration": 4.0,
        "value": 0.3,
        "until": 6.0,
    }


def test_a_jump_moves_the_reported_pose_not_the_body(sim: MultiRobotSimulationCore) -> None:
    robots = driving(sim, 2)
    twin_sim = make_sim(timestep=0.1, collision_narrowphase="aabb")
    with twin_sim:
        twins = driving(twin_sim, 2)
        plan = FaultPlan(events=(FaultEvent(1.0, "jump", "amr_1", 3.0, 2.0, np.pi / 2),))
        injector = FaultInjector(sim, robots, plan).attach()
        speeds(sim, robots, 2.0)
        speeds(twin_sim, twins, 2.0)
        assert injector.reported_offset[1] == pytest.approx([0.0, 2.0], abs=1e-12)
        assert not injector.reported_offset[0].any()
        for a, b in zip(robots, twins, strict=True):  # the bodies drive as without the fault
            assert a.get_pose().position == pytest.approx(b.get_pose().position, abs=1e-12)
        speeds(sim, robots, 2.5)
        assert not injector.reported_offset.any()  # relocalised when it ends


def test_delays_stop_robots_for_their_ticks(sim: MultiRobotSimulationCore) -> None:
    robots = driving(sim, 4)
    delays = DelayConfig(seed=3, p=0.05, min_delay=5, max_delay=5)
    injector = FaultInjector(sim, robots, FaultPlan(), delays=delays).attach()
    speeds(sim, robots, 10.0)
    rows = [r for r in injector.rows() if r["kind"] == "delay"]
    assert rows and all(r["duration"] == pytest.approx(0.5) for r in rows)
    assert [r["target"] for r in rows] == [  # the kit's draws: the same seed, the same delays
        f"amr_{i}"
        for row in sorted(
            (t, i) for i, robot in enumerate(injector.delays.intervals) for t, _ in robot
        )
        for i in [row[1]]
    ]


def test_written_out_faults_happen_again_the_same(sim: MultiRobotSimulationCore) -> None:
    robots = driving(sim, 3)
    plan = FaultPlan(robots=PLAN.robots[:2], seed=5)
    injector = FaultInjector(sim, robots, plan).attach()
    speeds(sim, robots, 120.0)
    happened = injector.schedule_rows()
    assert len(happened) >= 3
    poses = [r.get_pose().position for r in robots]
    again_events = tuple(FaultEvent(**row) for row in happened)
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as again:
        twins = driving(again, 3)
        replay = FaultInjector(again, twins, FaultPlan(events=again_events)).attach()
        speeds(again, twins, 120.0)
        assert replay.rows() == injector.rows()
        assert [t.get_pose().position for t in twins] == poses


def test_a_door_sticks_and_a_lift_goes_out_of_service(tmp_path: Path) -> None:
    (tmp_path / "house.building.yaml").write_text(HOUSE)
    (tmp_path / "tower.building.yaml").write_text(TOWER)
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_building(tmp_path / "house.building.yaml"))
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(0, 0, 0.25))
        robot = Agent.from_params(cube, sim)
        plan = FaultPlan(
            site=(
                SiteFault("door_stuck", "main_door", 1.0, 5.0, open=False),
                SiteFault("door_stuck", "main_door", 8.0, 3.0, open=True),
            )
        )
        FaultInjector(sim, [robot], plan).attach()
        doors = sim.doors
        assert doors is not None
        sim.run_simulation(duration=1.5)
        doors.open("main_door", "robot")  # asked while stuck closed: it stays closed
        sim.run_simulation(duration=4.0)
        assert doors["main_door"].mode is DoorMode.CLOSED
        sim.run_simulation(duration=2.8)  # freed at 6 s: it opens for the request (2 s)
        assert doors.is_open("main_door")
        doors.close("main_door", "robot")
        sim.run_simulation(duration=2.0)  # stuck open from 8 s, though nobody wants it
        assert doors.is_open("main_door")
        sim.run_simulation(duration=3.0)  # freed at 11 s: it closes (2 s)
        assert doors["main_door"].mode is DoorMode.CLOSED
        with pytest.raises(ConfigError, match="no door 'back_door'"):
            FaultInjector(
                sim, [robot], FaultPlan(site=(SiteFault("door_stuck", "back_door", 1.0, 1.0),))
            )
    with make_sim(timestep=0.1) as sim:
        sim.set_site(Site.from_building(tmp_path / "tower.building.yaml"))
        cube = AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_xyz(8, 0, 0.0))
        robot = Agent.from_params(cube, sim)
        plan = FaultPlan(site=(SiteFault("lift_out_of_service", "Lift1", 0.5, 10.0),))
        FaultInjector(sim, [robot], plan).attach()
        lifts = sim.lifts
        assert lifts is not None
        sim.run_simulation(duration=1.0)
        lifts.request("Lift1", "me", "L3")
        sim.run_simulation(duration=9.0)
        assert lifts["Lift1"].z == 0.0 and not lifts["Lift1"].in_service  # nothing moved
        sim.run_simulation(duration=8.0 + 2.5)  # back in service at 10.5 s: up 8 m, doors
        assert lifts["Lift1"].in_service and lifts["Lift1"].ready("L3", "me")
