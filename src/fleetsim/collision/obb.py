"""Exact box-box tests for many pairs at once (separating axis theorem, 15 axes).

Bodies whose collision geometry is a single box need no PyBullet distance query: two oriented
boxes, each grown by half the margin, touch exactly when no face or edge-cross axis separates
them. Vectorised over all candidate pairs.
"""

from __future__ import annotations

import numpy as np

_PARALLEL_EPS = 1e-9  # keeps edge-cross axes of parallel edges from false separations
# Index vectors for the nine (i, j) axis pairs and their cyclic successors i1, i2, j1, j2.
_I, _J = np.divmod(np.arange(9), 3)
_I1, _I2, _J1, _J2 = (_I + 1) % 3, (_I + 2) % 3, (_J + 1) % 3, (_J + 2) % 3


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
    # The nine cross products of an axis i of a with an axis j of b, all at once.
    ra = half_a[:, _I1] * abs_rel[:, _I2, _J] + half_a[:, _I2] * abs_rel[:, _I1, _J]
    rb = half_b[:, _J1] * abs_rel[:, _I, _J2] + half_b[:, _J2] * abs_rel[:, _I, _J1]
    dist = np.abs(t[:, _I2] * rel[:, _I1, _J] - t[:, _I1] * rel[:, _I2, _J])
    separated |= np.any(dist > ra + rb, axis=1)
    result: np.ndarray = ~separated
    return result
