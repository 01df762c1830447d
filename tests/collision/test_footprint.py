"""Mobile robots collide by their footprint (the box around their shapes, turning with them);
arms, meshes and `collision_footprints=False` keep PyBullet's exact query."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet as pb

from fleetsim import Agent, Pose
from fleetsim.geometry import quat
from fleetsim.models import resolve_urdf
from tests.conftest import make_sim


def _footprint(sim: object, robot: Agent) -> bool:
    bodies = sim._world.bodies  # type: ignore[attr-defined]
    return bool(bodies["footprint"][bodies.row(robot.handle)])


def test_only_robots_that_drive_and_keep_their_shape_get_a_footprint(cube_obj: Path) -> None:
    mesh_robot = cube_obj.with_name("mesh_robot.urdf")
    mesh_robot.write_text(
        f"""<robot name="mesh_robot"><link name="base">
        <collision><geometry><mesh filename="{cube_obj}"/></geometry></collision>
        </link></robot>"""
    )
    with make_sim() as sim:
        mobile = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim)
        manipulator = Agent.from_urdf("mobile_manipulator", Pose.from_xyz(3, 0, 0), sim_core=sim)
        arm = Agent.from_urdf(
            "arm_robot", Pose.from_xyz(6, 0, 0), sim_core=sim, use_fixed_base=True
        )
        meshy = Agent.from_urdf(str(mesh_robot), Pose.from_xyz(9, 0, 0), sim_core=sim)
        loaded = pb.loadURDF(resolve_urdf("mobile_robot"), [12, 0, 0], physicsClientId=sim.client)
        parked = sim.register_static_body(loaded)
        second = Agent.from_urdf("mobile_robot", Pose.from_xyz(15, 0, 0), sim_core=sim)
        assert _footprint(sim, mobile) and _footprint(sim, second)  # the cached facts too
        for other in (manipulator, arm, meshy):  # a revolute arm, a fixed base, a mesh
            assert not _footprint(sim, other)
        bodies = sim._world.bodies
        assert not bodies["footprint"][bodies.row(parked.handle)]  # structure, not a robot


def _pair_touches(sim: object, a: Agent, b: Agent, pose_a: Pose, pose_b: Pose) -> bool:
    a.set_pose(pose_a)
    b.set_pose(pose_b)
    return bool(sim.check_collisions())  # type: ignore[attr-defined]


def test_footprints_equal_box_geometry_and_never_miss_a_contact() -> None:
    """Two mobile robots at random nearby poses: the default answer equals PyBullet's query on
    boxes the size of the footprint at the same poses (an oracle outside our code), and is
    True whenever PyBullet's query on the robots' own shapes is."""
    rng = np.random.default_rng(5)
    with make_sim() as sim, make_sim(collision_footprints=False) as exact_sim:
        robots = [
            Agent.from_urdf("mobile_robot", Pose.from_xyz(4 * k, 0, 0), sim_core=sim)
            for k in range(2)
        ]
        exact = [
            Agent.from_urdf("mobile_robot", Pose.from_xyz(4 * k, 0, 0), sim_core=exact_sim)
            for k in range(2)
        ]
        bodies = sim._world.bodies
        row = bodies.row(robots[0].handle)
        lo, hi = bodies["aabb_local_min"][row], bodies["aabb_local_max"][row]
        assert np.allclose(hi[:2], [0.3, 0.258], atol=0.003)  # base 0.6 long, wheels 0.51 wide
        oracle = pb.connect(pb.DIRECT)
        try:
            shape = pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=((hi - lo) / 2).tolist(), physicsClientId=oracle
            )
            boxes = [pb.createMultiBody(0, shape, -1, physicsClientId=oracle) for _ in range(2)]
            answers = {True: 0, False: 0}
            corner_cases = 0
            for _ in range(300):
                poses = [
                    Pose.from_yaw(*rng.uniform(-0.75, 0.75, 2), 0.0, rng.uniform(-3.2, 3.2)),
                    Pose.from_yaw(0.0, 0.0, 0.0, rng.uniform(-3.2, 3.2)),
                ]
                ours = _pair_touches(sim, *robots, *poses)
                truth = _pair_touches(exact_sim, *exact, *poses)
                for box, pose in zip(boxes, poses, strict=True):
                    rot = quat.to_matrix(np.array(pose.orientation))
                    centre = np.array(pose.position) + rot @ ((lo + hi) / 2)
                    pb.resetBasePositionAndOrientation(
                        box, centre.tolist(), pose.orientation, physicsClientId=oracle
                    )
                points = pb.getClosestPoints(*boxes, 0.01, physicsClientId=oracle)
                distance = min((p[8] for p in points), default=1.0)
                if abs(distance) > 1e-3:
                    assert ours == (distance < 0), (poses, distance)
                    answers[ours] += 1
                assert ours or not truth, poses  # the footprint never misses a contact
                corner_cases += ours and not truth
            assert min(answers.values()) > 50  # both outcomes well represented
            assert corner_cases > 0  # and the footprint is larger than the wheels and base
        finally:
            pb.disconnect(physicsClientId=oracle)


def test_without_footprints_pybullet_answers_for_the_robots_own_shapes() -> None:
    """Footprints overlapping at a corner where the robots' shapes do not: a collision by
    default, none with `collision_footprints=False`; a cube and a mobile robot go through the
    box test too."""
    a_pose, b_pose = Pose.from_xyz(0, 0, 0), Pose.from_xyz(0.58, 0.5, 0)
    for footprints, expected in ((True, 1), (False, 0)):
        with make_sim(collision_footprints=footprints) as sim:
            a = Agent.from_urdf("mobile_robot", a_pose, sim_core=sim)
            b = Agent.from_urdf("mobile_robot", b_pose, sim_core=sim)
            assert len(sim.check_collisions()) == expected
            b.set_pose(Pose.from_xyz(0.59, 0, 0))  # ends overlapping by a centimetre: both see it
            assert len(sim.check_collisions()) == 1
            cube = Agent.from_urdf("simple_cube", Pose.from_xyz(0.0, 0.55, 0), sim_core=sim)
            pairs = sim.check_collisions()  # cube 0.4 wide at y 0.35-0.75: the wheel is at 0.258
            assert (min(a.object_id, cube.object_id), max(a.object_id, cube.object_id)) not in pairs
            cube.set_pose(Pose.from_xyz(0.0, 0.45, 0))  # now over the footprint's edge at 0.258
            pairs = sim.check_collisions()
            assert (min(a.object_id, cube.object_id), max(a.object_id, cube.object_id)) in pairs
