import math

import numpy as np
import pybullet as pb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetsim import Pose

coord = st.floats(-50, 50, allow_nan=False)
angle = st.floats(-math.pi, math.pi, allow_nan=False)
poses = st.builds(Pose.from_euler, coord, coord, coord, angle, st.floats(-1.5, 1.5), angle)


@given(poses, poses)
def test_compose_matches_pybullet(a: Pose, b: Pose) -> None:
    pos, orn = pb.multiplyTransforms(*a.to_pybullet(), *b.to_pybullet())
    # PyBullet computes in float32.
    assert a.compose(b).isclose(Pose(pos, orn), pos_tol=1e-4, angle_tol=1e-5)


@given(poses)
def test_inverse_undoes(p: Pose) -> None:
    assert p.compose(p.inverse()).isclose(Pose(), pos_tol=1e-9, angle_tol=1e-9)
    assert p.inverse().compose(p).isclose(Pose(), pos_tol=1e-9, angle_tol=1e-9)


def test_constructors_and_accessors() -> None:
    p = Pose.from_yaw(1, 2, 3, math.pi / 2)
    assert (p.x, p.y, p.z) == (1.0, 2.0, 3.0)
    assert p.yaw == pytest.approx(math.pi / 2)
    assert Pose.from_xyz(1, 2).position == (1.0, 2.0, 0.0)
    assert Pose.from_euler(0, 0, 0, 0.1, 0.2, 0.3).euler == pytest.approx((0.1, 0.2, 0.3))
    assert p.transform_point((1, 0, 0)) == pytest.approx((1, 3, 3))
    assert Pose.from_pybullet(*p.to_pybullet()) == p
    assert hash(p) == hash(Pose.from_yaw(1, 2, 3, math.pi / 2))


def test_orientation_is_normalised() -> None:
    assert Pose((0, 0, 0), (0, 0, 0, 2)).orientation == (0.0, 0.0, 0.0, 1.0)
    assert np.linalg.norm(Pose((0, 0, 0), (1, 1, 1, 1)).orientation) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("position", "orientation"),
    [
        ((0, 0), (0, 0, 0, 1)),
        ((0, 0, math.nan), (0, 0, 0, 1)),
        ((0, 0, 0), (0, 0, 0, 0)),
        ((0, 0, 0), (0, 0, 1)),
    ],
)
def test_bad_values_rejected(position: tuple[float, ...], orientation: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        Pose(position, orientation)
