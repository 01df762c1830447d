"""Bad input to the library gets a clear `ConfigError` and leaves the simulation as it was."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, MultiRobotSimulationCore, Pose

from ..conftest import make_sim, spawn_box


def test_handle_arrays_accept_exactly_what_is_documented(sim: MultiRobotSimulationCore) -> None:
    boxes = [spawn_box(sim, (x, 0, 0.5)) for x in range(3)]
    handles = sim.handles_of(boxes)
    pos, _ = sim.get_poses(handles)
    assert pos[:, 0].tolist() == [0, 1, 2]
    for bad in (
        np.array([True, False, True]),  # a mask, not handles
        np.array([0.7, 1.0]),  # floats are not truncated
        handles.reshape(3, 1),  # 2-D
        [0, 1],  # PyBullet ids / ints in a list
        "boxes",
    ):
        with pytest.raises(ConfigError):
            sim.get_poses(bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            sim.set_poses(bad, np.zeros((2, 3)))  # type: ignore[arg-type]
    assert sim.get_poses(handles)[0].tolist() == pos.tolist()


def test_objects_of_another_simulation_are_rejected() -> None:
    with make_sim() as sim1, make_sim() as sim2:
        mine, theirs = spawn_box(sim1, (0, 0, 0.5)), spawn_box(sim2, (5, 0, 0.5))
        with pytest.raises(ConfigError, match="another simulation"):
            sim1.set_poses([theirs], [[9, 9, 9]])
        assert theirs.get_pose().position == (5.0, 0.0, 0.5)
        assert mine.get_pose().position == (0.0, 0.0, 0.5)
        with pytest.raises(ConfigError, match="another simulation"):
            mine.attach_object(theirs)
        assert not theirs.is_attached()


def test_bad_attachments_change_nothing(sim: MultiRobotSimulationCore) -> None:
    arm = Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True)
    box = spawn_box(sim, (0.5, 0, 0.05), half=0.02)
    with pytest.raises(ConfigError, match=r"has no link 99: its links are 0\.\.11"):
        arm.attach_object(box, relative_pose=Pose(), link=99)
    with pytest.raises(ConfigError, match="SimObject"):
        arm.attach_object("box1")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="relative_pose must be a Pose"):
        arm.attach_object(box, relative_pose=(0, 0, 0))  # type: ignore[arg-type]
    assert not box.is_attached() and arm.get_attached_objects() == []
    for _ in range(5):
        sim.step_once()  # later steps work
    arm.attach_object(box, link=11)
    sim.step_once()
    assert box.attached_to is arm


def test_wrong_types_are_config_errors_that_say_what_is_expected(
    sim: MultiRobotSimulationCore,
) -> None:
    from fleetsim import AgentManager, AgentSpawnParams, GridSpawnParams

    manager = AgentManager(sim_core=sim)
    params = AgentSpawnParams(urdf_path="simple_cube")
    for count in (2.5, "3", -1, True):
        with pytest.raises(ConfigError, match="whole number"):
            manager.spawn_agents_grid(count, GridSpawnParams(), params)  # type: ignore[arg-type]
    assert len(sim.sim_objects) == 0
    arm = Agent.from_urdf("panda", sim_core=sim, use_fixed_base=True)
    with pytest.raises(ConfigError, match=r"target for panda_joint1 must be a number"):
        arm.set_joint_target(0, "0.5")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="list of numbers or a dict"):
        arm.set_all_joints_targets([[0.1, "x"]])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="must be numbers"):
        arm.set_all_joints_targets("abc")  # type: ignore[arg-type]
