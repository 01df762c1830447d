"""Your own motion model: one vectorised call per step for all its agents, beside the built-ins."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, ConfigError, MoveTo, Pose
from fleetsim.control import Motion, motion_model_names, register_motion_model
from fleetsim.scenario import build, load_scenario

from ..conftest import make_sim


class Hop:
    """Jumps `hop_m` straight towards the goal each step (and records how it was called)."""

    def __init__(self, hop_m: float = 0.5) -> None:
        self.hop_m = hop_m
        self.calls: list[int] = []

    def __call__(self, m: Motion, goal, goal_yaw, align, limits, dt):  # type: ignore[no-untyped-def]
        self.calls.append(len(m.pos))
        delta = goal - m.pos
        dist = np.linalg.norm(delta[:, :2], axis=1)
        step = np.minimum(dist, self.hop_m)
        unit = np.divide(delta, dist[:, None], out=np.zeros_like(delta), where=dist[:, None] > 0)
        pos = m.pos + unit * step[:, None]
        pos[step >= dist] = goal[step >= dist]
        still = np.zeros_like(m.vel)
        return (
            Motion(pos, m.yaw, still, np.zeros_like(m.yaw_rate)),
            dist - step,
            np.zeros(len(dist)),
        )


def test_a_registered_model_moves_its_agents_in_one_call_per_step() -> None:
    hop = Hop()
    register_motion_model("test_hop", hop, force=True)
    with make_sim(timestep=0.1) as sim:
        hoppers = [
            Agent.from_urdf(
                "simple_cube", Pose.from_xyz(0, y, 0), sim_core=sim, motion_mode="test_hop"
            )
            for y in (0.0, 2.0, 4.0)
        ]
        omni = Agent.from_urdf("simple_cube", Pose.from_xyz(0, 8, 0), sim_core=sim)
        moves = [MoveTo(Pose.from_xyz(3, h.get_pose().y, 0)) for h in hoppers]
        for hopper, move in zip(hoppers, moves, strict=True):
            hopper.add_action(move)
        omni.add_action(MoveTo(Pose.from_xyz(3, 8, 0)))
        for _ in range(6):
            sim.step_once()
        assert hop.calls == [3] * 6  # all three hoppers in each call, none of the omni robot
        assert all(m.status.value == "completed" for m in moves)
        assert [h.get_pose().x for h in hoppers] == [3.0, 3.0, 3.0]
        assert 0 < omni.get_pose().x < 3.0  # the built-in model drives on beside it


def test_unknown_and_duplicate_models_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="did you mean 'differential'"):
        AgentSpawnParams(urdf_path="simple_cube", motion_mode="diferential")
    with pytest.raises(ConfigError, match="already registered"):
        register_motion_model("omnidirectional", Hop(), force=True)
    with pytest.raises(ConfigError, match="callable"):
        register_motion_model("test_not_callable", 3)  # type: ignore[arg-type]
    assert {"omnidirectional", "differential"} <= set(motion_model_names())


def test_a_scenario_names_a_model_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "hopping.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from fleetsim.control import Motion

            def hop(m, goal, goal_yaw, align, limits, dt):
                return (
                    Motion(goal.copy(), m.yaw, np.zeros_like(m.vel), np.zeros_like(m.yaw_rate)),
                    np.zeros(len(goal)),
                    np.zeros(len(goal)),
                )
            """
        )
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(
        "simulation: {timestep: 0.1, target_rtf: 0}\n"
        "robots:\n  - model: simple_cube\n    motion_mode: 'hopping:hop'\n"
        "    actions: [{type: move_to, pose: [5, 0, 0]}]\n"
    )
    with build(load_scenario(path)).sim as sim:
        sim.step_once()
        assert sim.sim_objects[-1].get_pose().x == 5.0
    path.write_text(path.read_text().replace("hopping:hop", "hopping:hpo"))
    with pytest.raises(ConfigError, match=r"robots\[0\]\.motion_mode: cannot import motion model"):
        build(load_scenario(path))


def test_a_motion_model_that_returns_nonsense_stops_the_run_naming_it() -> None:
    """Arrays of the wrong length, or NaN, used to be taken: agents "arrived" without
    moving, or touched every body."""
    from fleetsim import Agent, FleetSimError, Pose
    from fleetsim.control import Motion, register_motion_model

    from ..conftest import make_sim

    def short(m, goal, goal_yaw, align, limits, dt):  # type: ignore[no-untyped-def]
        return Motion(m.pos[:1], m.yaw[:1], m.vel[:1], m.yaw_rate[:1]), goal[:1, 0], goal_yaw[:1]

    def nan(m, goal, goal_yaw, align, limits, dt):  # type: ignore[no-untyped-def]
        pos = m.pos.copy()
        pos[:, 0] = float("nan")
        return Motion(pos, m.yaw, m.vel, m.yaw_rate), np.ones(len(goal)), np.zeros(len(goal))

    register_motion_model("test_short", short, force=True)
    register_motion_model("test_nan", nan, force=True)
    for name, said in (
        ("test_short", "returned pos of shape (1, 3) for 2 agents"),
        ("test_nan", "returned pos that is not all finite"),
    ):
        with make_sim(timestep=0.1) as sim:
            robots = [
                Agent.from_urdf(
                    "simple_cube", Pose.from_xyz(2.0 * k, 0, 0), sim_core=sim, motion_mode=name
                )
                for k in range(2)
            ]
            for robot in robots:
                robot.set_goal(Pose.from_xyz(5, 5, 0))
            with pytest.raises(FleetSimError, match=re.escape(f"motion model '{name}' {said}")):
                sim.step_once()
