"""Boxes from USD's transforms: a local box carried by a 4 x 4 matrix (USD's row-vector
convention, translation in the last row) becomes a turned box in fleetsim's world (metres, Z
up): its centre, half extents and orientation, exact when the matrix is a rotation with scales
along the box's own axes (what nested `Xform`s, instancers and units make), and the
axis-aligned box of its eight corners when it shears (a rotated parent with a non-uniform
scale).
"""

from __future__ import annotations

import numpy as np

from fleetsim.geometry import quat

MIN_HALF = 5e-4  # m: a flat mesh (a floor's plane) gets this half thickness
_SHEAR = 1e-9  # |R R^T - I| beyond this: not a rotation with scales


def stage_frame(meters_per_unit: float, up_axis: str) -> np.ndarray:
    """The 4 x 4 matrix (row vectors) from a stage's units and up axis to metres with Z up."""
    frame = np.eye(4) * meters_per_unit
    frame[3, 3] = 1.0
    if up_axis == "Y":  # (x, y, z) -> (x, -z, y): a quarter turn about x
        frame[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
        frame[:3, :3] *= meters_per_unit
    return frame


def turned_boxes(
    matrices: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres (K, 3), half extents (K, 3), quaternions (K, 4)) of the local boxes `lo`..`hi`
    (K, 3) carried by `matrices` (K, 4, 4), row vectors. Half extents are at least
    `MIN_HALF`."""
    linear, shift = matrices[:, :3, :3], matrices[:, 3, :3]
    centre = np.einsum("ki,kij->kj", (lo + hi) / 2, linear) + shift
    scale = np.linalg.norm(linear, axis=2)  # row i: where the local axis i goes, and how long
    safe = np.where(scale > 0, scale, 1.0)
    rows = linear / safe[:, :, None]
    mirrored = np.linalg.det(rows) < 0  # a box is its own mirror image: turn one axis back
    rows[mirrored, 2] *= -1
    half = np.abs(hi - lo) / 2 * scale
    sheared = np.abs(rows @ rows.transpose(0, 2, 1) - np.eye(3)).max(axis=(1, 2)) > _SHEAR
    sheared |= (scale <= 0).any(axis=1)
    orientation = np.empty((len(matrices), 4))
    orientation[~sheared] = quat.from_matrix(rows[~sheared].transpose(0, 2, 1))
    if sheared.any():  # the corners' box, square to the world
        corners = _corners(lo[sheared], hi[sheared])
        world = np.einsum("kci,kij->kcj", corners, linear[sheared]) + shift[sheared, None, :]
        low, high = world.min(axis=1), world.max(axis=1)
        centre[sheared], half[sheared] = (low + high) / 2, (high - low) / 2
        orientation[sheared] = (0.0, 0.0, 0.0, 1.0)
    return centre, np.maximum(half, MIN_HALF), orientation


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The eight corners (K, 8, 3) of boxes lo..hi (K, 3)."""
    pick = np.array([[(c >> axis) & 1 for axis in range(3)] for c in range(8)], dtype=bool)
    return np.where(pick[None], hi[:, None, :], lo[:, None, :])
