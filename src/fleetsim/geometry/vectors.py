"""Per-row vector helpers for (N, k) arrays, faster than their `np.linalg` counterparts."""

from __future__ import annotations

import numpy as np

_FEW_ROWS = 256  # up to here one reduction beats a loop over columns (same sums, same order)


def row_norm(v: np.ndarray) -> np.ndarray:
    """Euclidean length of each row of `v` (N, k): `np.linalg.norm(v, axis=1)`, ~4x faster."""
    if len(v) <= _FEW_ROWS:  # two calls: a small fleet pays per call, not per row
        few: np.ndarray = np.sqrt(np.add.reduce(v * v, axis=1))
        return few
    total = v[:, 0] * v[:, 0]  # column by column: a reduction along rows is strided, ~3x slower
    for k in range(1, v.shape[1]):
        total += v[:, k] * v[:, k]
    out: np.ndarray = np.sqrt(total)
    return out
