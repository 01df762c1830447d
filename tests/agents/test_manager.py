import numpy as np
import pybullet as pb
import pytest

from fleetsim import (
    AgentManager,
    AgentSpawnParams,
    ConfigError,
    GridSpawnParams,
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObjectManager,
    SimObjectSpawnParams,
)
from fleetsim.models import UnknownModelError

from ..conftest import make_sim


def test_grid_positions() -> None:
    grid = GridSpawnParams(x_min=0, x_max=4, y_min=0, y_max=2, z_min=0.5)
    pos = grid.positions(5)  # 3 columns, 2 rows
    np.testing.assert_allclose(
        pos, [[0, 0, 0.5], [2, 0, 0.5], [4, 0, 0.5], [0, 2, 0.5], [2, 2, 0.5]]
    )
    spaced = GridSpawnParams(x_min=1, x_max=100, y_min=1, y_max=100, spacing=2.0, offset=(0, 0, 1))
    np.testing.assert_allclose(spaced.positions(4), [[1, 1, 1], [3, 1, 1], [1, 3, 1], [3, 3, 1]])
    with pytest.raises(ConfigError, match="widen the area, reduce the spacing"):
        GridSpawnParams(x_max=3, y_max=3, spacing=1.0).positions(100)


def test_grid_spacing_fills_a_narrow_area_and_stacks_layers() -> None:
    column = GridSpawnParams(x_min=0, x_max=0, y_min=-1, y_max=10, spacing=(1.0, 2.0))
    np.testing.assert_allclose(column.positions(3)[:, :2], [[0, -1], [0, 1], [0, 3]])
    # [dx, dy, dz]: a full 2 x 2 layer, then the next one dz higher (PyBulletFleet's spelling).
    stacked = GridSpawnParams(x_max=1, y_max=1, z_min=0.1, z_max=1, spacing=[1.0, 1.0, 0.5])
    pos = stacked.positions(6)
    np.testing.assert_allclose(pos[4:], [[0, 0, 0.6], [1, 0, 0.6]])
    with pytest.raises(ConfigError, match="raise z_max"):
        GridSpawnParams(x_max=1, y_max=1, z_max=0.4, spacing=[1.0, 1.0, 0.5]).positions(6)
    for bad in ([1.0, 2.0, 3.0, 4.0], [1.0, -1.0], "1", [float("nan")]):
        with pytest.raises(ConfigError, match="spacing"):
            GridSpawnParams(spacing=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="inverted"):
        GridSpawnParams(x_min=5, x_max=1)


def test_object_grid(sim: MultiRobotSimulationCore) -> None:
    manager = SimObjectManager(sim_core=sim)
    params = SimObjectSpawnParams(
        visual_shape=ShapeParams(half_extents=(0.2, 0.2, 0.2)), pickable=True
    )
    boxes = manager.spawn_objects_grid(9, GridSpawnParams(x_max=2, y_max=2, z_min=0.2), params)
    assert len(manager) == 9 and boxes[4].get_pose().position == (1.0, 1.0, 0.2)


def test_agent_grid_goals_callbacks_and_moving_count(sim: MultiRobotSimulationCore) -> None:
    manager = AgentManager(sim_core=sim)
    agents = manager.spawn_agents_grid(
        16, GridSpawnParams(x_max=6, y_max=6), AgentSpawnParams(urdf_path="simple_cube")
    )
    assert len(agents) == 16 and manager.get_moving_count() == 0
    calls = []
    manager.register_callback(lambda m, dt: calls.append((m, dt)), frequency=10)
    for i in range(4):
        manager.set_goal_pose(i, Pose.from_xyz(20, i, 0))
    sim.step_once()
    assert manager.get_moving_count() == 4 and calls[0][0] is manager


def test_mixed_is_seeded_and_counts_are_exact() -> None:
    kinds = [
        (AgentSpawnParams(urdf_path="simple_cube"), 3.0),
        (AgentSpawnParams(urdf_path="mobile_robot", motion_mode="differential"), 1.0),
    ]

    def mixed(seed: int) -> list[str]:
        with make_sim(seed=seed) as sim:
            spawned = AgentManager(sim).spawn_agents_grid_mixed(
                40, GridSpawnParams(x_max=30, y_max=30), kinds
            )
            return [a.urdf_path for a in spawned]

    first = mixed(1)
    assert first == mixed(1) and len(set(first)) == 2
    with make_sim() as sim:
        counted = AgentManager(sim).spawn_agent_grid_counts(
            GridSpawnParams(x_max=10, y_max=10), [(kinds[0][0], 5), (kinds[1][0], 2)]
        )
        assert [a.urdf_path.endswith("simple_cube.urdf") for a in counted] == [True] * 5 + [
            False
        ] * 2


def test_a_failing_batch_leaves_nothing(sim: MultiRobotSimulationCore) -> None:
    before = pb.getNumBodies(physicsClientId=sim.client)
    good = AgentSpawnParams(urdf_path="simple_cube")
    bad = AgentSpawnParams(urdf_path="no_such_robot")
    manager = AgentManager(sim)
    with pytest.raises(UnknownModelError):
        manager.spawn_objects_batch([good, good, bad])
    assert pb.getNumBodies(physicsClientId=sim.client) == before
    assert len(manager) == 0 and len(sim.world.motion.agents) == 0


def test_get_arrived_is_is_goal_reached_for_the_whole_fleet() -> None:
    """The agents that reached their goal, in spawn order, as `is_goal_reached()` says one by
    one: before and while driving, after arriving, after more are spawned and after some are
    removed (left out)."""
    with make_sim(timestep=0.1) as sim:
        manager = AgentManager(sim)
        agents = manager.spawn_agents_grid(
            200,
            GridSpawnParams(x_max=30, y_max=30, spacing=2.0),
            AgentSpawnParams(urdf_path="simple_cube", max_linear_vel=2.0),
        )
        rng = np.random.default_rng(3)

        def same() -> None:
            assert manager.get_arrived() == [a for a in manager.objects if a.is_goal_reached()]

        same()  # nobody has had a goal
        for agent in agents[::2]:
            p = agent.get_pose()
            agent.set_goal(Pose.from_xyz(p.x + rng.uniform(-4, 4), p.y + rng.uniform(-4, 4), p.z))
        for _ in range(25):
            sim.step_once()
            same()
        arrived = manager.get_arrived()
        assert 0 < len(arrived) < 100  # some of the 100 arrived, not all yet
        manager.spawn_agents_grid(
            10,
            GridSpawnParams(x_min=40, x_max=50, y_max=10, spacing=2.0),
            AgentSpawnParams(urdf_path="simple_cube"),
        )
        same()
        for agent in arrived[:3]:
            agent.remove()
        assert all(a not in manager.get_arrived() for a in arrived[:3])
        assert len(manager.get_arrived()) == len(arrived) - 3
