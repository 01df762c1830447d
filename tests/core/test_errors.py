"""After an exception escapes `step_once`, the step completed and the next one works."""

from __future__ import annotations

import contextlib

import pytest

from fleetsim import (
    Action,
    ActionStatus,
    Agent,
    ConfigError,
    MoveTo,
    MultiRobotSimulationCore,
    Pose,
    Wait,
)

from ..conftest import make_sim, spawn_box


@pytest.fixture
def sim() -> MultiRobotSimulationCore:
    with make_sim(timestep=0.1) as s:
        yield s


def robot(sim: MultiRobotSimulationCore, x: float = 0.0, y: float = 0.0) -> Agent:
    return Agent.from_urdf("mobile_robot", Pose.from_xyz(x, y, 0), sim_core=sim)


def test_raising_callback_completes_the_step_motion_and_clock_agree(
    sim: MultiRobotSimulationCore,
) -> None:
    bot = robot(sim)
    bot.set_goal(Pose.from_xyz(100, 0, 0))
    calls: list[float] = []

    def bad(s: MultiRobotSimulationCore, dt: float) -> None:
        calls.append(s.sim_time)
        if len(calls) == 5:
            raise ValueError("user bug")

    sim.register_callback(bad)
    reference = robot(sim, y=5)
    reference.set_goal(Pose.from_xyz(100, 5, 0))
    for _ in range(10):
        with contextlib.suppress(ValueError):
            sim.step_once()
    assert sim.step_count == 10
    assert calls == pytest.approx([0.1 * k for k in range(10)])  # never twice at one time
    # The robot that shared the raising step moved exactly as far as one that did not.
    assert bot.get_pose().x == pytest.approx(reference.get_pose().x)
    assert bot.get_pose().x > 0


class Exploding(Action):
    def update(self, agent: Agent, dt: float) -> None:
        raise RuntimeError("boom")


def test_raising_action_fails_once_and_later_steps_work(sim: MultiRobotSimulationCore) -> None:
    bot = robot(sim)
    other = robot(sim, y=4)
    other.add_action(MoveTo(Pose.from_xyz(3, 4, 0)))
    action = Exploding()
    after = Wait(0.3)
    bot.add_action_sequence([action, after])
    failed: list[Action] = []
    sim.on("action_failed", lambda agent, a: failed.append(a))
    with pytest.raises(RuntimeError, match="boom"):
        sim.step_once()
    assert action.status is ActionStatus.FAILED
    assert "raised RuntimeError: boom" in (action.error_message or "")
    assert failed == [action]
    for _ in range(100):  # no further error: the raising action is gone
        sim.step_once()
    assert after.status is ActionStatus.COMPLETED
    assert other.get_pose().x == pytest.approx(3.0, abs=0.02)
    assert sim.actions.failure_reasons == {"Exploding: Exploding raised RuntimeError: boom": 1}


def test_step_once_from_a_callback_is_refused(sim: MultiRobotSimulationCore) -> None:
    sim.register_callback(lambda s, dt: s.step_once())
    with pytest.raises(ConfigError, match="inside a step"):
        sim.step_once()
    assert sim.step_count == 1


@pytest.mark.parametrize("count", [1, 50])
def test_chains_of_instant_actions_are_iterative(sim: MultiRobotSimulationCore, count: int) -> None:
    """`wait 0` repeated forever: no RecursionError; at most MAX_STARTS_PER_STEP per step."""
    from fleetsim.actions.runner import MAX_STARTS_PER_STEP

    bot = robot(sim)
    done: list[int] = []

    def again(agent: Agent, action: Action) -> None:
        done.append(sim.step_count)
        nxt = Wait(0)
        nxt.on_done = again
        agent.add_action_sequence([Wait(0) for _ in range(count - 1)] + [nxt])

    first = Wait(0)
    first.on_done = again
    bot.add_action(first)  # outside a step: runs up to the per-step budget, then defers
    per_step = [len(done)]
    for _ in range(3):
        sim.step_once()
        per_step.append(len(done) - sum(per_step))
    assert all(0 < n * count <= MAX_STARTS_PER_STEP for n in per_step)
    assert sum(per_step) * count > 3 * MAX_STARTS_PER_STEP - count


def test_removed_agent_ends_its_actions_failed(sim: MultiRobotSimulationCore) -> None:
    bot = robot(sim)
    move, wait = MoveTo(Pose.from_xyz(10, 0, 0)), Wait(1.0)
    bot.add_action_sequence([move, wait])
    sim.step_once()
    failed: list[tuple[str, Action]] = []
    sim.on("action_failed", lambda agent, a: failed.append((agent.name, a)))
    bot.remove()
    assert [a for _, a in failed] == [move, wait]
    assert all(a.status is ActionStatus.FAILED for a in (move, wait))
    assert "was removed" in (move.error_message or "")
    sim.step_once()  # and the simulation goes on


def test_removed_body_leaves_active_pairs_readable(sim: MultiRobotSimulationCore) -> None:
    a = spawn_box(sim, (0, 0, 0.5))
    spawn_box(sim, (0.3, 0, 0.5))
    c = spawn_box(sim, (5, 0, 0.5))
    d = spawn_box(sim, (5.3, 0, 0.5))
    assert len(sim.check_collisions()) == 2
    a.remove()
    assert sim.get_active_collision_pairs() == [tuple(sorted((c.object_id, d.object_id)))]


def test_a_handler_that_raises_or_removes_does_not_lose_other_events(
    sim: MultiRobotSimulationCore,
) -> None:
    pairs = [(spawn_box(sim, (x, 0, 0.5)), spawn_box(sim, (x + 0.3, 0, 0.5))) for x in (0, 5, 10)]
    seen: list[tuple[str, str]] = []

    def first(oa: object, ob: object) -> None:
        raise RuntimeError("first handler")

    def removing(oa: object, ob: object) -> None:
        seen.append((oa.name, ob.name))  # type: ignore[attr-defined]
        if oa is pairs[0][0]:
            ob.remove()  # type: ignore[attr-defined]

    sim.on("collision_started", first)
    sim.on("collision_started", removing)
    with pytest.raises(RuntimeError, match="first handler"):
        sim.step_once()
    assert len(seen) == 3  # every pair told, to every handler
    assert sim.step_count == 1
    sim.step_once()  # the removed body's pair ends without error
    assert len(sim.get_active_collision_pairs()) == 2
