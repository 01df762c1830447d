import math

import numpy as np
import pytest

from fleetsim import (
    Action,
    ActionStatus,
    Agent,
    ConfigError,
    Drop,
    DropAction,
    MoveTo,
    MultiRobotSimulationCore,
    Path,
    Pick,
    PickAction,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    Wait,
    WaitAction,
)

from ..conftest import make_sim


@pytest.fixture
def sim() -> MultiRobotSimulationCore:
    with make_sim(timestep=0.05) as s:
        yield s


def robot(sim: MultiRobotSimulationCore, x: float = 0.0, y: float = 0.0, **kw: object) -> Agent:
    return Agent.from_urdf(
        "mobile_robot", Pose.from_xyz(x, y, 0), sim_core=sim, max_linear_vel=2.0, **kw
    )


def box(sim: MultiRobotSimulationCore, x: float, y: float, pickable: bool = True) -> SimObject:
    params = SimObjectSpawnParams(
        visual_shape=ShapeParams(half_extents=(0.15, 0.15, 0.15)),
        initial_pose=Pose.from_xyz(x, y, 0.4),
        pickable=pickable,
    )
    return SimObject.from_params(params, sim_core=sim)


def run_until_idle(sim: MultiRobotSimulationCore, agents: list[Agent], limit: int = 4000) -> None:
    for _ in range(limit):
        sim.step_once()
        if all(a.get_current_action() is None for a in agents):
            return
    raise AssertionError("actions did not finish")


def events(sim: MultiRobotSimulationCore) -> list[tuple[str, str, str]]:
    log: list[tuple[str, str, str]] = []
    for name in ("action_started", "action_completed", "action_failed"):
        sim.on(
            name,
            lambda agent, action, name=name: log.append((name, agent.name, type(action).__name__)),
        )
    return log


def test_queue_runs_in_order_with_events(sim: MultiRobotSimulationCore) -> None:
    log = events(sim)
    r = robot(sim)
    r.add_action_sequence(
        [MoveTo(Pose.from_xyz(2, 0, 0)), Wait(0.5), MoveTo(Path.from_positions([(2, 2), (0, 2)]))]
    )
    assert isinstance(r.get_current_action(), MoveTo) and len(r.get_action_queue()) == 2
    run_until_idle(sim, [r])
    kinds = [(e, k) for e, _, k in log]
    assert kinds == [
        ("action_started", "MoveTo"),
        ("action_completed", "MoveTo"),
        ("action_started", "Wait"),
        ("action_completed", "Wait"),
        ("action_started", "MoveTo"),
        ("action_completed", "MoveTo"),
    ]
    assert r.get_pose().isclose(Pose.from_yaw(0, 2, 0, math.pi), pos_tol=0.011, angle_tol=1e-3)
    assert sim.actions.completed_count == 3


def test_wait_lasts_its_duration(sim: MultiRobotSimulationCore) -> None:
    r = robot(sim)
    times: list[float] = []
    sim.on("action_completed", lambda a, act: times.append(sim.sim_time))
    r.add_action(Wait(1.0))
    run_until_idle(sim, [r])
    assert times == [pytest.approx(1.0)]


def test_clear_and_execute_cancel(sim: MultiRobotSimulationCore) -> None:
    r = robot(sim)
    first, second, third = MoveTo(Pose.from_xyz(9, 0, 0)), MoveTo(Pose.from_xyz(0, 9, 0)), Wait(0.1)
    r.add_action_sequence([first, second])
    sim.step_once()
    urgent = MoveTo(Pose.from_xyz(-1, 0, 0))
    r.execute_action(urgent)
    assert first.status is ActionStatus.CANCELLED and r.get_current_action() is urgent
    assert r.get_action_queue() == [second]
    r.add_action(third)
    r.clear_actions()
    assert urgent.status is ActionStatus.CANCELLED and r.get_current_action() is None
    assert second.status is ActionStatus.NOT_STARTED and not r.is_moving
    with pytest.raises(ConfigError, match="already used"):
        r.add_action(first)
    with pytest.raises(ConfigError, match="expected an Action"):
        r.add_action("go")


def test_pick_and_drop_leave_the_box_at_the_drop_pose(sim: MultiRobotSimulationCore) -> None:
    r = robot(sim, motion_mode="differential")
    crate = box(sim, 4, 0)
    target = Pose.from_yaw(1, 5, 0.15, 0.3)
    r.add_action_sequence([Pick(target_object_id=crate.object_id), Drop(target)])
    seen_attached = []
    sim.on("action_completed", lambda a, act: seen_attached.append(crate.is_attached()))
    run_until_idle(sim, [r])
    assert seen_attached == [True, False]
    assert crate.get_pose() == target and not crate.is_attached()
    assert r.get_attached_objects() == []
    # The robot backed out to the approach pose, a metre short of the drop point.
    assert np.hypot(r.get_pose().x - 1, r.get_pose().y - 5) == pytest.approx(1.0, abs=0.02)


def test_pick_nearest_by_position_and_drop_relative(sim: MultiRobotSimulationCore) -> None:
    r = robot(sim, x=2.6)  # its front is 5 cm from the near box: within reach
    far, near = box(sim, 3.4, 0), box(sim, 3.1, 0)
    r.add_action_sequence(
        [
            PickAction(target_position=(3, 0, 0.4), search_radius=0.5, use_approach=False),
            DropAction(drop_relative_pose=Pose.from_xyz(0, 0, 0.5), use_approach=False),
        ]
    )
    run_until_idle(sim, [r])
    assert near.get_pose().position == pytest.approx((3.1, 0, 0.9))  # picked in place, lifted 0.5 m
    assert far.get_pose().position == (3.4, 0.0, 0.4)


def test_pick_and_drop_refuse_what_is_out_of_reach(sim: MultiRobotSimulationCore) -> None:
    r = robot(sim)
    crate = box(sim, 30, 0)
    pick = Pick(target_object_id=crate.object_id, use_approach=False)
    r.add_action(pick)
    run_until_idle(sim, [r])
    assert pick.status is ActionStatus.FAILED
    assert pick.error_message is not None
    assert "is 29.55 m from robot" in pick.error_message.replace(r.name, "robot")
    assert "beyond its reach of 0.3 m" in pick.error_message
    assert not crate.is_attached() and crate.get_pose().position == (30.0, 0.0, 0.4)
    # Within reach it works; then a drop 10 m away is refused and the robot keeps the crate.
    near = box(sim, 0.4, 0)
    drop = Drop(Pose.from_xyz(10, 0, 0.4), use_approach=False)
    r.add_action_sequence([Pick(target_object_id=near.object_id, use_approach=False), drop])
    run_until_idle(sim, [r])
    assert drop.status is ActionStatus.FAILED and "at the drop pose" in (drop.error_message or "")
    assert near.attached_to is r
    assert sim.actions.failure_reasons.total() == 2


def test_static_bodies_are_not_pickable_unless_asked(sim: MultiRobotSimulationCore) -> None:
    shape = ShapeParams(half_extents=(0.15, 0.15, 0.15))
    rack = SimObject.from_params(
        SimObjectSpawnParams(visual_shape=shape, collision_mode="static"), sim_core=sim
    )
    loose = SimObject.from_params(SimObjectSpawnParams(visual_shape=shape), sim_core=sim)
    asked = SimObjectSpawnParams(visual_shape=shape, collision_mode="static", pickable=True)
    assert (rack.pickable, loose.pickable, SimObject.from_params(asked, sim_core=sim).pickable) == (
        False,
        True,
        True,
    )
    r = robot(sim)
    pick = Pick(target_object_id=rack.object_id, use_approach=False)
    r.add_action(pick)
    assert pick.status is ActionStatus.FAILED and "is not pickable" in (pick.error_message or "")


@pytest.mark.parametrize(
    ("make_action", "message"),
    [
        (lambda crate, other: Pick(target_object_id=9999), "no object with id 9999"),
        (lambda crate, other: Pick(target_position=(20, 20, 0)), "no pickable object within 0.5 m"),
        (lambda crate, other: Pick(target_object_id=other.object_id), "is not pickable"),
        (lambda crate, other: Drop(Pose.from_xyz(1, 1, 0)), "nothing to drop: .* holds no object"),
        (
            lambda crate, other: Drop(Pose.from_xyz(1, 1, 0), target_object_id=crate.object_id),
            "does not hold object",
        ),
    ],
)
def test_failures_say_why_and_change_nothing(
    sim: MultiRobotSimulationCore, make_action: object, message: str
) -> None:
    r = robot(sim)
    crate, fixed = box(sim, 2, 0), box(sim, -2, 0, pickable=False)
    before = sim.get_poses([r, crate, fixed])
    action = make_action(crate, fixed)  # type: ignore[operator]
    r.add_action(action)
    assert action.status is ActionStatus.FAILED
    assert action.error_message is not None and __import__("re").search(
        message, action.error_message
    )
    sim.step_once()
    after = sim.get_poses([r, crate, fixed])
    np.testing.assert_array_equal(before[0], after[0])
    assert sim.actions.failed_count == 1


def test_picking_what_another_robot_holds_fails(sim: MultiRobotSimulationCore) -> None:
    holder, thief = robot(sim, 0, 0), robot(sim, 0, 3)
    crate = box(sim, 0, 0)
    holder.attach_object(crate)
    pick = Pick(target_object_id=crate.object_id)
    thief.add_action(pick)
    assert (
        pick.status is ActionStatus.FAILED
        and pick.error_message == f"{crate.name} is held by {holder.name}"
    )
    assert crate.attached_to is holder


@pytest.mark.parametrize(
    "build",
    [
        lambda: MoveTo(Pose.from_xyz(1, 1, 0), tolerance=math.nan),
        lambda: MoveTo("kitchen"),
        lambda: Pick(),
        lambda: Pick(target_position=(1, math.inf, 0)),
        lambda: Pick(target_position=(1, 2)),
        lambda: Drop(),
        lambda: Drop(Pose.from_xyz(0, 0, 0), approach_offset=-1),
        lambda: Wait(-1),
        lambda: Pose.from_xyz(math.nan, 0, 0),
    ],
)
def test_bad_actions_are_rejected_at_construction(build: object) -> None:
    with pytest.raises(ValueError):
        build()  # type: ignore[operator]


def test_driving_robots_cost_no_python_per_step(sim: MultiRobotSimulationCore) -> None:
    calls = []

    class CountingMove(MoveTo):
        def update(self, agent: Agent, dt: float) -> None:
            calls.append(sim.step_count)
            super().update(agent, dt)

    r = robot(sim)
    r.add_action(CountingMove(Pose.from_xyz(5, 0, 0)))
    run_until_idle(sim, [r])
    assert len(calls) == 1 and sim.step_count > 50  # woken once, on arrival


def test_custom_polling_action() -> None:
    class Blink(Action):
        def __init__(self) -> None:
            super().__init__()
            self.ticks = 0

        def update(self, agent: Agent, dt: float) -> None:
            self.ticks += 1
            if self.ticks == 5:
                self.complete()

    with make_sim() as sim:
        r = Agent.from_urdf("simple_cube", sim_core=sim)
        blink = Blink()
        r.add_action(blink)
        for _ in range(10):
            sim.step_once()
        assert blink.ticks == 5 and blink.status is ActionStatus.COMPLETED


def test_aliases() -> None:
    assert WaitAction is Wait and PickAction is Pick and DropAction is Drop
