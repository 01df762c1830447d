"""`fleetsim.hints.prefetch`: rows asked for ahead of a compiled kernel's reads."""

from __future__ import annotations

import platform
from typing import Any

import numpy as np
import pytest


def test_a_prefetch_becomes_the_cpus_own_and_changes_no_value() -> None:
    """A kernel that asks for rows a few reads ahead (of a 1-D and a 2-D array, in an order no
    hardware guesses) and for the rows it will write sums and scatters what it would without
    asking, and its machine code asks."""
    numba = pytest.importorskip("numba")
    from fleetsim import hints

    def total(values: Any, table: Any, rows: Any, out: Any) -> float:
        s = 0.0
        for k in range(rows.shape[0]):
            if k + 4 < rows.shape[0]:
                hints.prefetch(values, rows[k + 4])
                hints.prefetch(table, rows[k + 4])
                hints.prefetch_write(out, rows[k + 4])
            s += values[rows[k]] + table[rows[k], 2]
            out[rows[k]] = k
        return s

    kernel = numba.njit(total)
    rng = np.random.default_rng(3)
    values, table = rng.normal(size=50_000), rng.normal(size=(50_000, 8))
    rows, out = rng.permutation(50_000), np.zeros(50_000, dtype=np.int64)
    assert kernel(values, table, rows, out) == pytest.approx(values.sum() + table[:, 2].sum())
    assert np.array_equal(out[rows], np.arange(50_000))
    code = "".join(kernel.inspect_asm().values())
    instruction = {"x86_64": "prefetch", "aarch64": "prfm"}.get(platform.machine())
    if instruction is None:
        pytest.skip(f"no known prefetch instruction on {platform.machine()}")
    assert code.count(instruction) >= 3  # one for each array


def test_the_compiled_prefetching_kernel_is_none_without_numba(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With Numba turned off, `jit.compiled_prefetching` gives None (the caller's NumPy path)
    and leaves the module's placeholder where it was."""
    from fleetsim import jit
    from fleetsim.collision import box_pairs

    monkeypatch.setenv("FLEETSIM_NO_NUMBA", "1")
    namespace = {"prefetch": box_pairs.prefetch}
    assert jit.compiled_prefetching(namespace, box_pairs._touching_rows) is None
    assert namespace["prefetch"] is box_pairs.prefetch
