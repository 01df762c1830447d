"""Lidars as users mount and read them: rates, REP 117 readings, noise, the fleet's arrays,
removal, reset, scenarios and the catalogue."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fleetsim import (
    Agent,
    AgentSpawnParams,
    ConfigError,
    LidarParams,
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)
from fleetsim.scenario import build, load_scenario


def wall(sim: MultiRobotSimulationCore, x: float, z: float = 0.5, half_z: float = 0.5) -> SimObject:
    """A wall across the x axis at `x` (its near face at x - 0.1)."""
    box = ShapeParams("box", half_extents=(0.1, 3.0, half_z))
    params = SimObjectSpawnParams(
        visual_shape=box, collision_shape=box, initial_pose=Pose.from_xyz(x, 0, z)
    )
    return SimObject.from_params(params, sim)


def robot(sim: MultiRobotSimulationCore, x: float = 0.0, yaw: float = 0.0) -> Agent:
    return Agent.from_params(
        AgentSpawnParams(urdf_path="simple_cube", initial_pose=Pose.from_yaw(x, 0, 0, yaw)), sim
    )


def test_readings_follow_rep_117() -> None:
    """A hit is its distance; no hit within range reads +inf."""
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        wall(sim, 3.1)
        lidar = robot(sim).add_lidar(beams=4, range_min=0.5, range_max=10.0)
        sim.step_once()
        scan = lidar.scan()
    assert scan.ranges.dtype == np.float32 and scan.ranges.shape == (4,)
    # beams at -180, -90, 0 and 90 degrees: the wall's face 3.0 m ahead, nothing elsewhere
    assert scan.angle_min == pytest.approx(-math.pi)
    assert scan.angle_max == pytest.approx(math.pi / 2)
    assert scan.ranges[2] == pytest.approx(3.0) and np.isposinf(scan.ranges[[0, 1, 3]]).all()
    np.testing.assert_allclose(scan.points(), [[3.0, 0.0]], atol=1e-6)


def test_a_hit_nearer_than_range_min_reads_minus_inf() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        wall(sim, 1.1)
        lidar = robot(sim).add_lidar(beams=1, fov=0.1, range_min=1.5)
        sim.step_once()
        assert lidar.ranges[0] == -math.inf
        assert lidar.scan().angle_min == pytest.approx(-0.05)


def test_scans_at_their_rate_and_tell_who_scanned() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        wall(sim, 4.0)
        slow = robot(sim).add_lidar(beams=8, rate=5.0)
        fast = robot(sim, x=-2.0).add_lidar(beams=16, rate=20.0)
        heard: list[tuple[float, list[int]]] = []
        sim.events.on(
            "lidar_scanned", lambda s, groups: heard.append((s.sim_time, [len(g) for g in groups]))
        )
        stamps = []
        for _ in range(6):
            sim.step_once()
            stamps.append((slow.scan().stamp, fast.scan().stamp))
    assert [round(a, 6) for a, _ in stamps] == [0.1, 0.1, 0.3, 0.3, 0.5, 0.5]
    assert [round(b, 6) for _, b in stamps] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert [round(t, 6) for t, _ in heard] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert heard[0][1] == [1, 1] and heard[1][1] == [1]


def test_the_fleets_scans_are_one_array_per_model() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        wall(sim, 6.0)
        fleet = [robot(sim, x=float(x)) for x in range(3)]
        lidars = [r.add_lidar(beams=90) for r in fleet]
        sim.step_once()
        (group,) = sim.lidars.groups
        assert group.ranges.shape == (3, 90) and group.ranges.dtype == np.float32
        np.testing.assert_array_equal(group.owners, [r.handle for r in fleet])
        for k, lidar in enumerate(lidars):
            np.testing.assert_array_equal(lidar.ranges, group.ranges[k])
        ahead = group.ranges[:, 45]  # beam 45: straight ahead, at the next robot or the wall
    np.testing.assert_allclose(ahead, [0.8, 0.8, 3.9], atol=1e-6)  # (from the centres)


def test_robots_see_each_other_where_they_are_now() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        a, b = robot(sim), robot(sim, x=5.0, yaw=math.pi)
        eyes = a.add_lidar(beams=4)
        b.set_goal(Pose.from_xyz(2.0, 0, 0), align_orientation=False)
        seen = []
        for _ in range(60):
            sim.step_once()
            seen.append(float(eyes.ranges[2]))
        where = float(sim.world.bodies["pos"][sim.world.bodies.rows([b.handle])[0], 0])
    assert seen[-1] == pytest.approx(where - 0.2, abs=1e-5)  # (from a's centre to b's face)
    assert seen[0] > seen[-1] + 2.5


def test_noise_and_dropouts_are_seeded() -> None:
    def run(seed: int) -> np.ndarray:
        with MultiRobotSimulationCore(SimulationParams(timestep=0.1, seed=seed)) as sim:
            wall(sim, 5.1)
            lidar = robot(sim).add_lidar(
                beams=2000, fov=0.5, noise_std=0.02, dropout=0.1, range_max=30.0
            )
            sim.step_once()
            return lidar.ranges

    first, again, other = run(3), run(3), run(4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other, equal_nan=True)
    dropped = np.isnan(first)
    assert 0.07 < dropped.mean() < 0.13
    beam = np.linspace(-0.25, 0.25, 2000)
    exact = 5.0 / np.cos(beam)
    error = first[~dropped] - exact[~dropped]
    assert abs(error.mean()) < 0.003 and 0.017 < error.std() < 0.023


def test_what_is_seen_open_doors_and_other_floors() -> None:
    """A body whose collisions are off (an open door) is not seen; a box on the floor above
    (above the sensor's height) is not either."""
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        door = wall(sim, 2.0)
        wall(sim, 4.0, z=3.5, half_z=0.4)  # upstairs
        wall(sim, 6.0)
        lidar = robot(sim).add_lidar(beams=4)
        sim.step_once()
        closed = float(lidar.ranges[2])
        door.set_collision_mode("disabled")
        sim.step_once()
        opened = float(lidar.ranges[2])
    assert closed == pytest.approx(1.9) and opened == pytest.approx(5.9)


def test_removal_reset_and_two_simulations() -> None:
    with (
        MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as one,
        MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as two,
    ):
        wall(one, 2.0)
        wall(two, 3.0)
        a, b = robot(one), robot(two)
        la, lb = a.add_lidar(beams=4), b.add_lidar(beams=4)
        extra = a.add_lidar(beams=8)
        one.step_once()
        two.step_once()
        assert la.ranges[2] == pytest.approx(1.9) and lb.ranges[2] == pytest.approx(2.9)
        assert len(a.lidars) == 2
        extra.remove()
        assert [x.id for x in a.lidars] == [la.id]
        with pytest.raises(ConfigError, match="no lidar"):
            extra.scan()
        a.remove()
        assert len(one.lidars) == 0
        one.step_once()  # (nothing to scan)
        two.reset()
        assert len(two.lidars) == 0
        c = robot(two)
        lc = c.add_lidar(beams=4)
        two.run_simulation(0.3)
        two.run_simulation(0.3)
        assert lc.scan().stamp == pytest.approx(0.6) and np.isposinf(lc.ranges).all()


def test_bad_params_are_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match="range_min < range_max"):
        LidarParams(range_min=5, range_max=2)
    with MultiRobotSimulationCore(SimulationParams()) as sim:
        with pytest.raises(ConfigError, match="did you mean 'range_max'"):
            robot(sim).add_lidar({"rnage_max": 3})
        assert len(sim.lidars) == 0


def test_lidars_that_would_not_fit_in_memory_are_refused_with_the_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each lidar's scans take memory (about 40 bytes a beam while the fleet scans): the lidar
    that would take the fleet's over what the machine has (here a machine of 100 MB) is
    refused, with the estimate and the fix, and not added; removing lidars gives their room
    back."""
    import fleetsim.memory
    from fleetsim.sensors.lidars import BYTES_PER_BEAM

    monkeypatch.setattr(fleetsim.memory, "machine_bytes", lambda: 100_000_000)
    fits = int(fleetsim.memory.USABLE * 100_000_000 / (BYTES_PER_BEAM * 10_000))
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        carrier = robot(sim)
        added = [carrier.add_lidar(beams=10_000) for _ in range(fits)]
        refused = rf"{fits + 1} lidars \({(fits + 1) * 10_000:,} beams in all\) would need"
        with pytest.raises(ConfigError, match=refused + r" about 0\.1 GB of memory; this "
                                                        r"machine has 0\.1 GB: give them fewer "
                                                        r"beams"):  # fmt: skip
            carrier.add_lidar(beams=10_000)
        assert len(sim.lidars) == fits and len(carrier.lidars) == fits
        added[-1].remove()
        carrier.add_lidar(beams=10_000)  # (its room back)
        for lidar in carrier.lidars:
            lidar.remove()
        small = carrier.add_lidar(beams=4)
        sim.step_once()
        assert len(small.ranges) == 4 and len(sim.lidars) == 1


def test_a_scenarios_lidars_beyond_memory_are_refused_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The beams a scenario's robot entries would carry are counted from the file (robots times
    the beams of each lidar) and refused, naming the entry, before any robot is built (here on
    a machine of 100 MB: 30 robots with 100,000 beams would take about 0.12 GB)."""
    import fleetsim.memory

    monkeypatch.setattr(fleetsim.memory, "machine_bytes", lambda: 100_000_000)
    path = tmp_path / "lidars.yaml"
    entry = "  - model: simple_cube\n    grid: {count: COUNT}\n    sensors: [{beams: 100000}]\n"
    path.write_text("robots:\n" + entry.replace("COUNT", "30"))
    with pytest.raises(ConfigError, match=r"lidars.yaml line 4: robots\[0\]\.sensors: the "
                                          r"robots' lidars \(3,000,000 beams in all\) would "
                                          r"need about 0\.1 GB"):  # fmt: skip
        build(load_scenario(str(path)))
    path.write_text("robots:\n" + entry.replace("COUNT", "3"))
    with build(load_scenario(str(path))).sim as sim:
        assert len(sim.lidars) == 3


def test_scenario_sensors_and_a_model_that_carries_one(tmp_path: Path) -> None:
    path = tmp_path / "scan.yaml"
    path.write_text(
        "name: scan\n"
        "simulation: {timestep: 0.1, duration: 0.3}\n"
        "objects:\n"
        "  - {shape: {type: box, half_extents: [0.1, 3, 0.5]}, pose: [3, 0, 0.5], static: true}\n"
        "robots:\n"
        "  - model: mobile_robot_lidar\n"
        "    pose: [0, 0, 0]\n"
        "    sensors:\n"
        "      - {beams: 64, rate: 5, frame: rear, mount: [-0.3, 0, 0.15, 3.14159265]}\n"
    )
    built = build(load_scenario(path))
    with built.sim as sim:
        sim.step_once()
        front, rear = sim.lidars.groups
        assert (front.params.beams, front.params.frame) == (360, "laser")
        assert (rear.params.beams, rear.params.frame) == (64, "rear")
        # the front lidar, 0.2 m ahead of the base, sees the box's face at 2.9 straight ahead
        assert front.ranges[0, 180] == pytest.approx(2.7, abs=1e-5)
        assert np.isposinf(rear.ranges[0, 32])
    path.write_text(path.read_text().replace("rate: 5", "rate: -5"))
    with pytest.raises(ConfigError, match=r"scan.yaml line 9: robots\[0\].sensors\[0\].rate"):
        load_scenario(path)
