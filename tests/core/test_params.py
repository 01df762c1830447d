from pathlib import Path

import pytest

from fleetsim import AssetNotFoundError, ConfigError, MultiRobotSimulationCore, SimulationParams


def test_defaults() -> None:
    p = SimulationParams()
    assert (p.gui, p.physics, p.enable_floor, p.pose_sync) == (False, False, True, "auto")
    assert p.timestep == pytest.approx(1 / 240)
    assert p.max_steps_per_frame == 10 and p.gui_min_fps == 30


def test_unknown_key_names_the_closest() -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'time_step'.*did you mean 'timestep'"):
        SimulationParams.from_dict({"time_step": 0.1})
    with pytest.raises(ConfigError, match=r"unknown key 'target_rft'.*did you mean 'target_rtf'"):
        MultiRobotSimulationCore.from_dict({"target_rft": 2})


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"timestep": "fast"}, "timestep: .*valid number"),
        ({"timestep": 0}, "timestep: .*greater than 0"),
        ({"target_rtf": -1}, "target_rtf"),
        ({"pose_sync": "sometimes"}, "pose_sync: .*'auto', 'eager' or 'lazy'"),
        ({"gravity": [0, 0]}, "gravity"),
        ({"max_steps_per_frame": 0}, "max_steps_per_frame"),
        ({"spatial_hash_cell_size_mode": "constant"}, "spatial_hash_cell_size: required"),
        ({"duration": float("nan")}, "duration"),
    ],
)
def test_bad_values_are_named(config: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SimulationParams.from_dict(config)


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(ConfigError, match="timestep"):
        SimulationParams(timestep=-0.1)
    assert SimulationParams(timestep=1).timestep == 1.0


def test_pose_sync_auto_resolution() -> None:
    assert not SimulationParams().eager_sync
    assert SimulationParams(physics=True).eager_sync
    assert not SimulationParams(gui=True).eager_sync  # the GUI syncs per drawn frame instead
    assert not SimulationParams(physics=True, pose_sync="lazy").eager_sync
    assert SimulationParams(pose_sync="eager").eager_sync


def test_from_config_file(tmp_path: Path) -> None:
    flat = tmp_path / "flat.yaml"
    flat.write_text("timestep: 0.05\ntarget_rtf: 0\nseed: 3\n")
    assert SimulationParams.from_config(flat).timestep == 0.05
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("simulation:\n  timestep: 0.1\nrobots: []\n")
    assert SimulationParams.from_yaml(scenario).timestep == 0.1
    with MultiRobotSimulationCore.from_yaml(flat) as sim:
        assert sim.params.seed == 3


def test_config_file_errors_name_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(AssetNotFoundError, match=r"missing\.yaml"):
        SimulationParams.from_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("timestep: 0.1\ngui: [true\n")
    with pytest.raises(ConfigError, match=r"broken.yaml line \d+: not valid YAML"):
        SimulationParams.from_config(broken)
    typo = tmp_path / "typo.yaml"
    typo.write_text("simulation:\n  enable_flor: false\n")
    with pytest.raises(ConfigError, match=r"typo.yaml \(simulation\).*did you mean 'enable_floor'"):
        SimulationParams.from_config(typo)


def test_replace_validates() -> None:
    p = SimulationParams().replace(target_rtf=0)
    assert p.target_rtf == 0
    with pytest.raises(ConfigError):
        p.replace(timestep=0)


def test_live_parameters_are_validated_and_the_rest_fixed() -> None:
    mine = SimulationParams(timestep=0.1, target_rtf=0)
    with MultiRobotSimulationCore(mine) as sim:
        assert sim.params is not mine  # the simulation keeps its own copy
        sim.params.target_rtf = 3.0  # live: takes effect on the next run_simulation
        assert sim.params.target_rtf == 3.0
        for name, value in (("target_rtf", -1), ("max_steps_per_frame", 0), ("duration", 0)):
            with pytest.raises(ConfigError, match=name):
                setattr(sim.params, name, value)
        with pytest.raises(ConfigError, match="timestep cannot change once the simulation"):
            sim.params.timestep = 0
        with pytest.raises(ConfigError, match="physics cannot change"):
            sim.params.physics = True
        assert (sim.params.timestep, sim.params.max_steps_per_frame) == (0.1, 10)
        sim.step_once()
        assert sim.sim_time == pytest.approx(0.1)
    mine.timestep = 0.2  # the caller's own object stays editable, and validated
    with pytest.raises(ConfigError, match="timestep"):
        mine.timestep = float("nan")
    with pytest.raises(ConfigError, match="contact_points"):
        mine.collision_narrowphase = "contact_points"
    assert mine.collision_narrowphase == "closest_points"
