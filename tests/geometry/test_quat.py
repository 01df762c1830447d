import math

import numpy as np
import pybullet as pb
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fleetsim.geometry import quat

angles = st.floats(-math.pi, math.pi, allow_nan=False)
finite = st.floats(-100, 100, allow_nan=False)
raw_quats = arrays(np.float64, 4, elements=st.floats(-1, 1)).filter(
    lambda q: np.linalg.norm(q) > 0.1
)


def same_rotation(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.isclose(abs(np.dot(a, b)), 1.0, atol=1e-9))


@given(angles, st.floats(-1.5, 1.5), angles)
def test_from_euler_matches_pybullet(roll: float, pitch: float, yaw: float) -> None:
    ours = quat.from_euler(roll, pitch, yaw)
    assert same_rotation(ours, np.array(pb.getQuaternionFromEuler((roll, pitch, yaw))))
    # Angles agree up to a full turn (pi and -pi are the same yaw).
    error = quat.wrap_angle(np.asarray(quat.to_euler(ours)) - (roll, pitch, yaw))
    np.testing.assert_allclose(error, 0.0, atol=1e-7)


@given(raw_quats, raw_quats)
def test_multiply_matches_pybullet(a: np.ndarray, b: np.ndarray) -> None:
    a, b = quat.normalize(a), quat.normalize(b)
    _, expected = pb.multiplyTransforms((0, 0, 0), a.tolist(), (0, 0, 0), b.tolist())
    assert same_rotation(quat.multiply(a, b), np.array(expected))


@given(raw_quats, arrays(np.float64, 3, elements=finite))
def test_rotate_agrees_with_matrix_and_pybullet(q: np.ndarray, v: np.ndarray) -> None:
    q = quat.normalize(q)
    m = np.array(pb.getMatrixFromQuaternion(q.tolist())).reshape(3, 3)
    np.testing.assert_allclose(quat.to_matrix(q), m, atol=1e-9)
    np.testing.assert_allclose(quat.rotate(q, v), m @ v, atol=1e-7)
    np.testing.assert_allclose(quat.rotate(quat.conjugate(q), quat.rotate(q, v)), v, atol=1e-7)


@given(angles)
def test_yaw_round_trip(yaw: float) -> None:
    assert math.isclose(float(quat.yaw_of(quat.from_yaw(yaw))), yaw, abs_tol=1e-9) or math.isclose(
        abs(yaw), math.pi, abs_tol=1e-9
    )


def test_vectorised_over_a_fleet_matches_one_at_a_time() -> None:
    rng = np.random.default_rng(0)
    qs = quat.normalize(rng.normal(size=(500, 4)))
    vs = rng.normal(size=(500, 3))
    batch = quat.rotate(qs, vs)
    for i in range(0, 500, 37):
        np.testing.assert_allclose(batch[i], quat.rotate(qs[i], vs[i]))
    yaws = rng.uniform(-3, 3, size=500)
    np.testing.assert_allclose(quat.yaw_of(quat.from_yaw(yaws)), yaws, atol=1e-12)
    assert quat.to_matrix(qs).shape == (500, 3, 3)


def test_wrap_angle() -> None:
    np.testing.assert_allclose(
        quat.wrap_angle([3 * math.pi / 2, -3 * math.pi / 2, 0.1]), [-math.pi / 2, math.pi / 2, 0.1]
    )


def test_normalize_rejects_zero_and_nan() -> None:
    for bad in ([0, 0, 0, 0], [np.nan, 0, 0, 1]):
        try:
            quat.normalize(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} accepted")


def test_from_matrix_inverts_to_matrix_everywhere() -> None:
    """Random turns, and half turns about axes where only the off-diagonal terms carry the
    signs (the case a trace-only formula gets wrong): the same rotation back."""
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=(20_000, 4)))
    half_turns = [np.r_[axis / np.linalg.norm(axis), 0.0] for axis in rng.normal(size=(50, 3))]
    q = np.vstack((q, half_turns, np.eye(4)))
    back = quat.from_matrix(quat.to_matrix(q))
    assert np.allclose(np.abs(np.sum(q * back, axis=1)), 1.0, atol=1e-12)
    assert np.allclose(quat.to_matrix(back), quat.to_matrix(q), atol=1e-12)
