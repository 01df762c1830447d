"""Pairs of bodies as one sortable int64 key each: min(handle) * 2^31 + max(handle)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim import jit
from fleetsim.geometry.vectors import all_set
from fleetsim.jit import MIN_ROWS, compiled

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


def sorted_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The keys of sorted unique `a` not in sorted unique `b` (np.setdiff1d for sorted sets, in
    a few calls: a binary search of each key of `a` in `b`)."""
    if not b.size or not a.size:
        return a
    at = b.searchsorted(a)
    np.minimum(at, len(b) - 1, out=at)
    out: np.ndarray = a[b[at] != a]
    return out


def changes(now: np.ndarray, before: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys of `now` not in `before`, keys of `before` not in `now`) of two sorted unique key
    arrays: one merge of the two (compiled, from `MIN_ROWS` keys: `jit.enough`), else two
    binary searches."""
    merge = compiled(_merge) if jit.enough(len(now) + len(before), MIN_ROWS) else None
    if merge is None:
        return sorted_difference(now, before), sorted_difference(before, now)
    now = np.ascontiguousarray(now, dtype=np.int64)
    before = np.ascontiguousarray(before, dtype=np.int64)
    started, ended = np.empty(len(now), dtype=np.int64), np.empty(len(before), dtype=np.int64)
    counts = merge(now, before, started, ended)
    return started[: counts[0]], ended[: counts[1]]


def _merge(now: Any, before: Any, started: Any, ended: Any) -> Any:
    a = b = s = e = 0
    while a < now.shape[0] and b < before.shape[0]:
        if now[a] < before[b]:
            started[s] = now[a]
            s, a = s + 1, a + 1
        elif before[b] < now[a]:
            ended[e] = before[b]
            e, b = e + 1, b + 1
        else:
            a, b = a + 1, b + 1
    while a < now.shape[0]:
        started[s] = now[a]
        s, a = s + 1, a + 1
    while b < before.shape[0]:
        ended[e] = before[b]
        e, b = e + 1, b + 1
    return s, e


def unique_sorted(keys: np.ndarray) -> np.ndarray:
    """`keys` sorted without repeats: as they are when they already are (the usual case: pairs
    come sorted by row, and handles grow with rows until bodies are removed)."""
    if keys.size < 2 or all_set(keys[1:] > keys[:-1]):
        return keys
    return np.unique(keys)


def pairs_of_unchanged(
    i: np.ndarray, j: np.ndarray, changed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) of rows neither of which is `changed` (bool, N): those whose answer
    from a previous check still holds."""
    keep = ~(changed[i] | changed[j])
    return i[keep], j[keep]
