"""Lazy body creation: robots the arrays can answer for wait for their PyBullet body until
something asks PyBullet about them, and the simulation behaves exactly as with every body made."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet as pb
import pytest

from fleetsim import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    ConfigError,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    SimObject,
)
from tests.conftest import make_sim

# A box robot whose inertial frame is off its link frame: made late, it must still sit where the
# table says (PyBullet places bodies by the inertial frame).
OFFSET_BOX = """<?xml version="1.0"?>
<robot name="offset_box">
  <link name="base">
    <inertial><origin xyz="0.1 -0.05 0.02"/><mass value="2.0"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.6 0.4 0.4"/></geometry></collision>
    <visual><origin xyz="0 0 0.2"/><geometry><box size="0.6 0.4 0.4"/></geometry></visual>
  </link>
</robot>
"""


def count(sim: MultiRobotSimulationCore) -> int:
    return int(pb.getNumBodies(physicsClientId=sim.client))


def grid(
    sim: MultiRobotSimulationCore, n: int, model: str = "simple_cube", **kw: object
) -> list[Agent]:
    return AgentManager(sim).spawn_agents_grid(
        n,
        GridSpawnParams(x_max=20.0, y_max=20.0, spacing=2.0),
        AgentSpawnParams(urdf_path=model, **kw),  # type: ignore[arg-type]
    )


def inertial_pose(sim: MultiRobotSimulationCore, body: int) -> np.ndarray:
    pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=sim.client)
    return np.array([*pos, *orn])


def test_a_fleet_of_boxes_waits_for_its_bodies_and_gets_each_on_demand() -> None:
    with make_sim() as sim:
        empty = count(sim)
        robots = grid(sim, 30)
        assert count(sim) == empty + 1  # the first, to learn the model from
        assert "no PyBullet body yet" in repr(robots[7])
        robots[7].set_pose(Pose.from_yaw(3.0, 4.0, 0.0, 0.5))
        body = robots[7].object_id  # asking for its id makes it, where it is now
        assert count(sim) == empty + 2
        assert sim.get_object(body) is robots[7]
        where = Pose.from_yaw(3.0, 4.0, 0.0, 0.5)
        fresh = pb.loadURDF(
            robots[7].urdf_path, where.position, where.orientation, physicsClientId=sim.client
        )
        np.testing.assert_allclose(inertial_pose(sim, body), inertial_pose(sim, fresh), atol=1e-9)
        pb.removeBody(fresh, physicsClientId=sim.client)
        assert robots[7].object_id == body  # made once
        assert sim.sync() == 0 and count(sim) == empty + 30  # sync makes PyBullet whole


def test_a_late_body_sits_where_an_early_one_would(tmp_path: Path) -> None:
    urdf = tmp_path / "offset_box.urdf"
    urdf.write_text(OFFSET_BOX)
    poses = {}
    for mode in ("eager", "lazy"):
        with make_sim(body_creation=mode, timestep=0.1) as sim:
            robots = grid(sim, 4, str(urdf))
            robots[2].set_goal(Pose.from_yaw(5.0, 3.0, 0.0, 1.0))
            for _ in range(100):
                sim.step_once()
            sim.sync()
            poses[mode] = inertial_pose(sim, robots[2].object_id)
    np.testing.assert_allclose(poses["lazy"], poses["eager"], atol=1e-9)
    assert np.linalg.norm(poses["lazy"][:2] - (5.0, 3.0)) < 0.3  # it drove there, turned


def _run(
    mode: str, cube_obj: Path
) -> tuple[list[tuple[float, ...]], dict[str, int], set, int, int]:
    """40 cubes driving across a mesh block and each other, checked every step."""
    with make_sim(body_creation=mode, timestep=0.05, seed=3) as sim:
        SimObject.from_mesh(
            str(cube_obj), Pose.from_xyz(5.0, 5.0, 0.5), sim_core=sim, collision_mode="static"
        )
        robots = grid(sim, 40, max_linear_vel=2.0)
        rng = np.random.default_rng(7)
        for robot in robots:
            x, y = rng.uniform(0.0, 10.0, 2)
            robot.set_goal(Pose.from_xyz(x, y, 0.0), align_orientation=False)
        touching: set[tuple[str, str]] = set()
        for _ in range(150):
            sim.step_once()
            for a, b in sim.get_active_collision_pairs():
                names = sorted((sim.get_object(a).name, sim.get_object(b).name))  # type: ignore[union-attr]
                touching.add((names[0], names[1]))
        poses = [tuple(np.round(r.get_pose().position, 12)) for r in robots]
        made = count(sim)
        sim.sync()
        return poses, dict(sim.collision_counts), touching, made, count(sim)


def test_lazy_and_eager_creation_simulate_the_same_fleet(cube_obj: Path) -> None:
    eager = _run("eager", cube_obj)
    lazy = _run("lazy", cube_obj)
    assert lazy[0] == eager[0]  # every pose
    assert lazy[1] == eager[1]  # collision episodes by kind
    assert lazy[2] == eager[2]  # the pairs that touched, by name
    assert eager[1]["robot-structure"] > 0 and eager[1]["robot-robot"] > 0  # both paths ran
    # Lazy: only robots that met the mesh (PyBullet's query) or were named in a pair got bodies.
    assert lazy[3] < eager[3]
    assert lazy[4] == eager[4]  # and sync makes the rest


def test_which_bodies_wait() -> None:
    with make_sim() as sim:
        base = count(sim)
        grid(sim, 5, "mobile_robot")  # built of primitives: collides by its footprint
        assert count(sim) == base + 1
        grid(sim, 3, "arm_robot", use_fixed_base=True)  # PyBullet answers for arms
        assert count(sim) == base + 4
    with make_sim(physics=True) as sim:  # "auto" with physics makes every body
        base = count(sim)
        grid(sim, 5)
        assert count(sim) == base + 5
    with make_sim(body_creation="eager") as sim:
        base = count(sim)
        grid(sim, 5)
        assert count(sim) == base + 5


def test_lazy_creation_with_physics_or_the_gui_is_refused() -> None:
    with pytest.raises(ConfigError, match="body_creation"):
        make_sim(body_creation="lazy", physics=True)
    with pytest.raises(ConfigError, match="body_creation"):
        make_sim(body_creation="lazy", gui=True)


def test_removing_resetting_and_two_simulations() -> None:
    with make_sim() as a, make_sim() as b:
        ra, rb = grid(a, 6), grid(b, 4)
        base_a, base_b = count(a), count(b)
        ra[3].remove()  # never made: nothing to remove from PyBullet
        ra[0].remove()  # the real one
        assert count(a) == base_a - 1 and len(a.sim_objects) == 4
        assert count(b) == base_b and rb[2].object_id >= 0 and count(b) == base_b + 1
        a.reset()
        again = grid(a, 3)
        assert count(a) == 2  # the floor and the first robot: the model is learnt afresh
        assert again[1].object_id >= 0 and count(a) == 3
        a.run_simulation(duration=0.05)


def test_batch_agents_keep_their_own_spawn_params() -> None:
    with make_sim() as sim:
        robots = grid(sim, 9, max_linear_vel=1.5)
        for robot in robots:
            np.testing.assert_allclose(
                robot.spawn_params.initial_pose.position, robot.get_pose().position
            )
            assert robot.spawn_params.max_linear_vel == 1.5
        assert (
            robots[4].spawn_params.initial_pose.position
            != robots[5].spawn_params.initial_pose.position
        )


def test_bad_batch_input_leaves_the_simulation_as_it_was() -> None:
    with make_sim() as sim:
        grid(sim, 2)
        before = (
            len(sim.sim_objects),
            len(sim.world.bodies),
            len(sim.world.motion.agents),
            count(sim),
        )
        with pytest.raises(ConfigError, match="orientations"):
            Agent.from_params_at(
                AgentSpawnParams(), np.zeros((3, 3)), np.zeros((2, 4)), sim_core=sim
            )
        with pytest.raises(ConfigError, match="positions"):
            Agent.from_params_at(AgentSpawnParams(), np.zeros((3, 2)), (0, 0, 0, 1), sim_core=sim)
        with pytest.raises(ConfigError, match="finite"):
            Agent.from_params_at(AgentSpawnParams(), [[0, 0, np.nan]], (0, 0, 0, 1), sim_core=sim)
        with pytest.raises(ConfigError, match=r"no_such_robot"):
            Agent.from_params_at(
                AgentSpawnParams(urdf_path="no_such_robot"),
                np.zeros((3, 3)),
                (0, 0, 0, 1),
                sim_core=sim,
            )
        after = (
            len(sim.sim_objects),
            len(sim.world.bodies),
            len(sim.world.motion.agents),
            count(sim),
        )
        assert after == before


def test_collision_pairs_name_real_bodies() -> None:
    with make_sim() as sim:
        robots = grid(sim, 10)
        robots[6].set_pose(Pose.from_xyz(*robots[5].get_pose().position))  # on top of 5
        pairs = sim.check_collisions()
        assert len(pairs) == 1
        for body in pairs[0]:
            assert pb.getBodyInfo(body, physicsClientId=sim.client)  # a live PyBullet body
        assert {sim.get_object(i) for i in pairs[0]} == {robots[5], robots[6]}
