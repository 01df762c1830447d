"""Exact box-box tests for many pairs at once (separating axis theorem, 15 axes).

Bodies whose collision geometry is a single box need no PyBullet distance query: two oriented
boxes, each grown by half the margin, touch exactly when no face or edge-cross axis separates
them. Vectorised over all candidate pairs.
"""

from __future__ import annotations

import numpy as np

_PARALLEL_EPS = 1e-9  # keeps edge-cross axes of parallel edges from false separations


def boxes_touch(
    centre_a: np.ndarray,
    rot_a: np.ndarray,
    half_a: np.ndarray,
    centre_b: np.ndarray,
    rot_b: np.ndarray,
    half_b: np.ndarray,
) -> np.ndarray:
    """Whether oriented boxes a[k] and b[k] overlap or touch; centres (N, 3), rotations (N, 3, 3),
    half extents (N, 3). Returns (N,) bool."""
    rel = np.einsum("nji,njk->nik", rot_a, rot_b)  # b's axes in a's frame
    abs_rel = np.abs(rel) + _PARALLEL_EPS
    t = np.einsum("nji,nj->ni", rot_a, centre_b - centre_a)  # offset in a's frame
    separated = np.zeros(len(t), dtype=bool)
    # a's face axes, then b's face axes.
    separated |= np.any(np.abs(t) > half_a + np.einsum("nij,nj->ni", abs_rel, half_b), axis=1)
    t_b = np.einsum("nji,nj->ni", rel, t)
    separated |= np.any(np.abs(t_b) > half_b + np.einsum("nji,nj->ni", abs_rel, half_a), axis=1)
    # The nine cross products of an axis of a with an axis of b.
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            ra = half_a[:, i1] * abs_rel[:, i2, j] + half_a[:, i2] * abs_rel[:, i1, j]
            rb = half_b[:, j1] * abs_rel[:, i, j2] + half_b[:, j2] * abs_rel[:, i, j1]
            dist = np.abs(t[:, i2] * rel[:, i1, j] - t[:, i1] * rel[:, i2, j])
            separated |= dist > ra + rb
    result: np.ndarray = ~separated
    return result
