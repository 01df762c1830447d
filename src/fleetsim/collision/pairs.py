"""Pairs of bodies as one sortable int64 key each: min(handle) * 2^31 + max(handle)."""

from __future__ import annotations

import numpy as np

KEY_SHIFT = np.int64(2**31)
Pair = tuple[int, int]  # body handles, smaller first


def pair_key(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One sortable int64 per unordered pair of handles: min * 2^31 + max."""
    key: np.ndarray = np.minimum(a, b) * KEY_SHIFT + np.maximum(a, b)
    return key


def key_pairs(keys: np.ndarray) -> list[Pair]:
    """The (handle, handle) pairs of keys, smaller handle first."""
    return list(zip((keys // KEY_SHIFT).tolist(), (keys % KEY_SHIFT).tolist(), strict=True))


def key_handles(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two handle arrays of keys (smaller first)."""
    return keys // KEY_SHIFT, keys % KEY_SHIFT
