"""`fleetsim import pybullet-fleet`: PyBulletFleet configs become scenarios that run, and
everything not carried over is listed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from fleetsim.errors import ConfigError
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.importer import convert_pybullet_fleet

from ..conftest import fleetsim

FLEETS = """
simulation:
  target_rtf: 0
  timestep: 0.1
  duration: 0
  gui: true
  physics: false
  collision_detection_method: hybrid
  collision_margin: 0.02
  log_level: info
  camera:
    {camera_mode: manual, camera_view_type: top_down, camera_distance: 30, camera_auto_scale: 1}
  lighting: {light_position: [1, 2, 3]}
managers:
  - name: movers
    fleet_controller: {type: batch_differential, max_linear_vel: 2.0, max_linear_accel: 1.0}
  - name: arms
    fleet_controller: {max_linear_vel: 0.0}
entities:
  - name: mover
    urdf_path: robots/mobile_robot.urdf
    manager: movers
    controller: {type: omni}
    user_data: {role: carrier}
    grid: {count: 12, columns: 4, spacing: [2.0, 3.0, 0.0], offset: [1.0, 2.0, 0.3]}
  - urdf_path: robots/simple_cube.urdf
    controller: {type: omni}
    grid: {x_min: 2, x_max: 3, y_min: 0, y_max: 2, spacing: [10.0, 10.0, 0.0], offset: [-5, -5, 0]}
  - name: arm
    urdf_path: arm_robot
    use_fixed_base: true
    manager: arms
    grid: {count: 2, columns: 2, spacing: [2.0, 2.0, 0.0], offset: [-8.0, 8.0, 0.0]}
"""


def write(tmp_path: Path, text: str, name: str = "peer.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_fleets_managers_and_grids_are_carried_over(tmp_path: Path) -> None:
    converted = convert_pybullet_fleet(write(tmp_path, FLEETS))
    data = converted.scenario
    assert data["simulation"] == {
        "target_rtf": 0,
        "timestep": 0.1,
        "physics": False,
        "collision_narrowphase": "closest_points",
        "collision_margin": 0.02,
        "camera_mode": "manual",
        "camera_view": "top_down",
        "camera_distance": 30,
    }
    mover, cubes, arm = data["robots"]
    # The manager's batch controller wins over the entity's fallback, as in the source format.
    assert mover["motion_mode"] == "differential" and mover["max_linear_vel"] == 2.0
    assert mover["model"] == "mobile_robot"
    assert mover["grid"] == {
        "count": 12,
        "spacing": [2.0, 3.0],
        "origin": [1.0, 2.0, 0.0],
        "columns": 4,
    }
    # Cells by index x 2..3, y 0..2: six robots from the cell (2, 0).
    assert cubes["grid"] == {
        "count": 6,
        "spacing": [10.0, 10.0],
        "origin": [15.0, -5.0, 0],
        "columns": 2,
    }
    assert arm["use_fixed_base"] is True and "motion_mode" not in arm
    notes = "\n".join(converted.notes)
    for expected in (
        "simulation.duration 0",
        "simulation.gui: true",
        "collision_detection_method 'hybrid': closest_points",
        "simulation.log_level",
        "simulation.lighting",
        "camera.camera_auto_scale",
        "managers[1] max_linear_vel 0.0",
        "entities[0].user_data",
        "entities[0].grid.offset z 0.3",
    ):
        assert expected in notes


def test_the_converted_file_builds_and_runs(tmp_path: Path) -> None:
    source = write(tmp_path, FLEETS)
    out = tmp_path / "scenario.yaml"
    result = fleetsim("import", "pybullet-fleet", str(source), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "not carried over" in result.stderr and "entities[0].user_data" in result.stderr
    assert out.read_text().startswith("# Converted by `fleetsim import pybullet-fleet`")
    with build(load_scenario(out), duration=1.0).sim as sim:
        assert len(sim.sim_objects) == 12 + 6 + 2
        sim.run_simulation()


def test_a_config_without_entities_gets_a_robot_and_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "simulation: {timestep: 0.01, physics: false}\n")
    converted = convert_pybullet_fleet(path)
    assert converted.scenario["robots"] == [{"name": "robot", "model": "mobile_robot"}]
    assert any("no entities" in note for note in converted.notes)
    assert yaml.safe_load(converted.to_yaml("x"))["simulation"] == {
        "timestep": 0.01,
        "physics": False,
    }


def test_what_is_not_a_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a PyBulletFleet config"):
        convert_pybullet_fleet(write(tmp_path, "robots: []\n"))
    with pytest.raises(ConfigError, match="needs urdf_path"):
        convert_pybullet_fleet(write(tmp_path, "entities: [{name: x}]\n"))
    result = fleetsim("import", "pybullet-fleet", "missing.yaml", "-o", "x", cwd=tmp_path)
    assert result.returncode == 2 and "config file not found" in result.stderr
