import numpy as np

from fleetsim.geometry.vectors import row_norm


def test_row_norm_matches_numpy_for_2d_and_3d_rows() -> None:
    rng = np.random.default_rng(3)
    for k in (2, 3, 4):
        v = rng.normal(size=(50, k)) * 10.0 ** rng.integers(-5, 5, (50, 1))
        np.testing.assert_allclose(row_norm(v), np.linalg.norm(v, axis=1), rtol=1e-15)
    assert row_norm(np.empty((0, 3))).shape == (0,)
    assert row_norm(np.array([[3.0, 4.0]])).tolist() == [5.0]
