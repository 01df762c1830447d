"""Safety fields: each beam's stretch inside a field, a robot stopped and slowed by what its
scanner sees, released when clear, the speed factors composed, bad fields refused, and the
VDA 5050 state that says so."""

from __future__ import annotations

import json
import math

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
from fleetsim.interfaces.vda5050.encode import Motion
from fleetsim.interfaces.vda5050.messages import timestamp
from fleetsim.interfaces.vda5050.topics import Topics
from fleetsim.interfaces.vda5050.vehicle import Vehicle
from fleetsim.sensors import FieldSet, SafetyFieldParams
from fleetsim.sensors.fields import beam_intervals


def inside(polygon: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points inside (or on) a convex polygon, by the sides of its edges."""
    sides = []
    for a, b in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        e = b - a
        sides.append(e[0] * (points[..., 1] - a[1]) - e[1] * (points[..., 0] - a[0]))
    sides = np.stack(sides)
    return (sides >= -1e-9).all(axis=0) | (sides <= 1e-9).all(axis=0)


@pytest.mark.parametrize("seed", range(4))
def test_each_beams_stretch_inside_a_field(seed: int) -> None:
    """Sampled along every beam, the points inside the polygon are those between the beam's
    near and far distances (polygons around the scanner and off to one side)."""
    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0, 2 * math.pi, 7))
    centre = rng.uniform(-2, 2, 2) if seed % 2 else np.zeros(2)
    polygon = centre + rng.uniform(0.5, 2.0, (7, 1)) * np.stack((np.cos(angles), np.sin(angles)), 1)
    hull = polygon[_hull(polygon)]
    lidar = LidarParams(beams=360)
    stretch = beam_intervals(tuple(map(tuple, hull)), lidar)
    t = np.linspace(0, 6, 3001)
    beam = lidar.angle_min + lidar.angle_increment * np.arange(360)
    points = t[None, :, None] * np.stack((np.cos(beam), np.sin(beam)), 1)[:, None, :]
    truth = inside(hull, points)
    ours = (t >= stretch[:, :1] - 1e-9) & (t <= stretch[:, 1:] + 1e-9)
    disagree = truth != ours
    assert truth.any() and disagree.sum() <= 2 * 360  # (at most a sample at each end)
    assert (np.abs(np.diff(truth.astype(int), axis=1)).sum(axis=1) <= 2).all()


def _hull(points: np.ndarray) -> list[int]:
    """Convex hull (indices, counter-clockwise) by gift wrapping."""
    start = int(np.argmin(points[:, 0]))
    hull, at = [], start
    while True:
        hull.append(at)
        nxt = (at + 1) % len(points)
        for k in range(len(points)):
            a, b = points[nxt] - points[at], points[k] - points[at]
            if a[0] * b[1] - a[1] * b[0] < 0:
                nxt = k
        at = nxt
        if at == start:
            return hull


def scene(sim: MultiRobotSimulationCore, wall_x: float = 8.0) -> tuple[Agent, SimObject]:
    box = ShapeParams("box", half_extents=(0.1, 2.0, 1.0))
    wall = SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=box, collision_shape=box, initial_pose=Pose.from_xyz(wall_x, 0, 1)
        ),
        sim,
    )
    robot = Agent.from_params(AgentSpawnParams(urdf_path="simple_cube"), sim)
    robot.add_lidar(beams=180, rate=10.0)
    return robot, wall


def test_a_robot_stops_short_of_an_obstacle_and_drives_on_when_it_goes() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robot, wall = scene(sim)
        robot.set_safety_fields("auto")
        heard: list[tuple[float, str]] = []
        sim.events.on(
            "safety_field_changed", lambda agent, state: heard.append((sim.sim_time, state))
        )
        robot.set_goal(Pose.from_xyz(12, 0, 0), align_orientation=False)
        for _ in range(200):
            sim.step_once()
        x = robot.get_pose().position[0]
        assert robot.safety_field_state == "protective" and robot.linear_velocity[0] == 0
        assert 7.5 < x < 7.7 and sim.collision_count == 0  # front at x + 0.2, the wall at 7.9
        assert heard[0][1] == "warning" and "protective" in [s for _, s in heard]
        totals = sim.safety.totals(sim.sim_time)
        assert totals["protective_stops"] >= 1 and totals["stopped_s"] > 3
        wall.set_collision_mode("disabled")  # (the way is clear: as good as gone)
        for _ in range(60):
            sim.step_once()
        assert robot.safety_field_state == "clear" and robot.get_pose().position[0] > 9


def test_the_warning_field_slows_and_overrides_compose() -> None:
    fields = SafetyFieldParams(
        (FieldSet(0.0, ((0.25, -0.3), (0.6, -0.3), (0.6, 0.3), (0.25, 0.3)),
                  ((0.25, -1.0), (5.0, -1.0), (5.0, 1.0), (0.25, 1.0))),),
        warning_speed=0.25,
    )  # fmt: skip
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robot, _ = scene(sim, wall_x=30.0)
        robot.set_safety_fields(fields)
        post = ShapeParams("box", half_extents=(0.1, 0.1, 1.0))
        SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=post, collision_shape=post, initial_pose=Pose.from_xyz(6, 0.8, 1)
            ),
            sim,
        )  # beside the way: in the warning field as the robot passes, never in the protective
        robot.set_speed_override(0.8)
        robot.set_goal(Pose.from_xyz(20, 0, 0), align_orientation=False)
        speeds = {}
        for _ in range(400):
            sim.step_once()
            speeds[round(sim.sim_time, 1)] = (robot.linear_velocity[0], robot.safety_field_state)
        agents = sim.world.motion.agents
        row = agents.row(robot.motion_handle)
    slowed = [v for v, state in speeds.values() if state == "warning"]
    assert len(slowed) > 10 and max(slowed[7:]) == pytest.approx(0.8 * 0.25)  # (braked to it)
    assert speeds[40.0] == (pytest.approx(0.8), "clear")  # past it: the override alone
    assert agents["speed_scale"][row] == pytest.approx(0.8)


def test_muted_fields_neither_stop_nor_slow() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robot, _ = scene(sim, wall_x=3.0)
        robot.set_safety_fields("auto")
        robot.mute_safety_fields()
        robot.set_goal(Pose.from_xyz(2.5, 0, 0), align_orientation=False)
        for _ in range(60):
            sim.step_once()
        assert robot.safety_field_state == "clear" and robot.is_goal_reached()
        robot.set_safety_fields(None)
        assert robot.safety_field_state is None and len(sim.safety) == 0


def test_bad_fields_are_refused_with_the_fix() -> None:
    with MultiRobotSimulationCore(SimulationParams()) as sim:
        robot = Agent.from_params(AgentSpawnParams(urdf_path="simple_cube"), sim)
        with pytest.raises(ConfigError, match=r"add its safety scanner first"):
            robot.set_safety_fields("auto")
    with pytest.raises(ConfigError, match="convex"):
        FieldSet(0.0, ((0, 0), (2, 0), (1, 0.2), (2, 1), (0, 1)))
    with pytest.raises(ConfigError, match="start at min_speed 0"):
        SafetyFieldParams((FieldSet(0.5, ((0, 0), (1, 0), (1, 1))),))


def test_vda5050_state_reports_the_field_violation() -> None:
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robot, _ = scene(sim, wall_x=0.37)
        vehicle = Vehicle(robot, Topics(manufacturer="ACME"), map_id="site")
        idle = json.loads(vehicle.out.state(timestamp(0.0), Motion(0, 0, 0, 0, 0, 0, False)))
        robot.set_safety_fields("auto")
        sim.step_once()
        assert robot.safety_field_state == "protective"  # at rest: the wall 7 cm ahead
        state = json.loads(vehicle.out.state(timestamp(0.1), Motion(0, 0, 0, 0, 0, 0, False)))
    assert idle["safetyState"] == {"eStop": "NONE", "fieldViolation": False}
    assert state["safetyState"] == {"eStop": "NONE", "fieldViolation": True}
    from vda5050.model.state import State  # (an independent client's model of the message)

    assert State.model_validate(state).safety_state.field_violation is True


def test_fields_are_muted_to_pick_a_load_and_on_again_after() -> None:
    from fleetsim.actions import ActionStatus, Pick

    with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
        robot, _ = scene(sim, wall_x=9.0)
        robot.set_safety_fields("auto")
        crate = ShapeParams("box", half_extents=(0.15, 0.15, 0.15))
        load = SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=crate,
                collision_shape=crate,
                initial_pose=Pose.from_xyz(3.0, 0, 0.15),
                pickable=True,
            ),
            sim,
        )
        pick = Pick(target_object_id=load.object_id)
        robot.add_action(pick)
        for _ in range(300):
            sim.step_once()
            if pick.is_complete():
                break
        assert pick.status is ActionStatus.COMPLETED and load.attached_to is robot
        robot.set_goal(Pose.from_xyz(12, 0, 0), align_orientation=False)  # on to the wall
        for _ in range(200):
            sim.step_once()
        assert robot.safety_field_state == "protective" and sim.collision_count == 0


def test_a_model_can_carry_its_fields() -> None:
    from fleetsim.models import KNOWN_MODELS, register_model, unregister_model

    with pytest.raises(ConfigError, match="safety fields need a lidar"):
        register_model("amr_without_eyes", KNOWN_MODELS["mobile_robot"], safety_fields="auto")
    register_model(
        "guarded_amr", KNOWN_MODELS["mobile_robot"], sensors=[{"beams": 90}], safety_fields="auto"
    )
    try:
        with MultiRobotSimulationCore(SimulationParams(timestep=0.1)) as sim:
            fleet = [
                Agent.from_params(
                    AgentSpawnParams("guarded_amr", initial_pose=Pose.from_xyz(2.0 * k, 0, 0)), sim
                )
                for k in range(3)
            ]
            sim.step_once()
            assert [r.safety_field_state for r in fleet] == ["clear"] * 3
            assert len(sim.safety) == 3 and sim.lidars.groups[0].params.beams == 90
    finally:
        unregister_model("guarded_amr")
