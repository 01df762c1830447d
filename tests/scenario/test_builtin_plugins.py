"""Built-in plugins on real simulations built from scenario files."""

import textwrap
from pathlib import Path

import numpy as np

from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario


def built(tmp_path: Path, body: str, name: str = "s.yaml"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return build(load_scenario(path))


def test_patrol_visits_every_waypoint_in_a_loop(tmp_path: Path) -> None:
    run = built(
        tmp_path,
        """
        simulation: {timestep: 0.05, target_rtf: 0, duration: 40}
        robots:
          - name: guard
            model: simple_cube
            max_linear_vel: 2.0
            plugins:
              - type: patrol
                params: {waypoints: [[3, 0, 0], [3, 3, 0], [0, 3, 0]], tolerance: 0.0}
    """,
    )
    guard = run.scene.robot("guard")
    seen = []
    run.sim.on("post_step", lambda s, dt: seen.append(guard.get_pose().position))
    summary = run_scenario(run)
    positions = np.array(seen)
    for waypoint in ([3, 0, 0], [3, 3, 0], [0, 3, 0]):
        assert np.min(np.linalg.norm(positions - waypoint, axis=1)) < 1e-9
    assert summary.actions_completed >= 2 and summary.actions_failed == 0  # looped


def test_random_goals_are_seeded(tmp_path: Path) -> None:
    body = """
        simulation: {timestep: 0.1, target_rtf: 0, duration: 30, seed: SEED}
        robots:
          - model: simple_cube
            grid: {count: 5, spacing: 2.0}
            plugins: [{type: random_goals, params: {area: [-10, -10, 10, 10]}}]
    """

    def final_positions(seed: int) -> np.ndarray:
        run = built(tmp_path, body.replace("SEED", str(seed)), f"s{seed}.yaml")
        with run.sim:
            run_scenario(run)
            return run.sim.get_poses(run.scene.robots)[0]

    np.testing.assert_array_equal(final_positions(4), final_positions(4))
    assert not np.array_equal(final_positions(4), final_positions(5))


def test_shuttle_needs_exactly_one_place_per_side(tmp_path: Path) -> None:
    import pytest

    from fleetsim.scenario import PluginError

    with pytest.raises(PluginError, match="shuttle needs exactly one of 'pick' or 'pick_grid'"):
        built(
            tmp_path,
            """
            robots:
              - model: simple_cube
                plugins: [{type: shuttle, params: {drop: [1, 0, 0]}}]
        """,
        )
