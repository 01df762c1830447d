"""Optional compilation with Numba (`pip install "fleetsim[fast]"`) of the kernels that large
fleets spend their steps in (`fleetsim.collision.kernels`, `fleetsim.control.kernels`).

`compiled(f)` is `f` compiled (cached on disk, so only the first run on a machine compiles; a
division by zero gives inf or NaN as in NumPy), or None without Numba or with
`FLEETSIM_NO_NUMBA=1`; callers then use their NumPy path. Kernels
are used from `MIN_ROWS` rows up: they are faster at every size, but Numba takes half a second
to import, which a short run of a small fleet (a step well under a millisecond) would notice.
A process that runs many simulations (a sweep's or a fuzz's worker) calls `warm()` once, and
uses them at every size. Each kernel gives its NumPy path's numbers to the last bit, so a run
is the same in either process. The crowd's step (`fleetsim.people.kernel`) is the exception: it
gives its NumPy path's positions to 1e-9 m, and a crowd takes it whenever Numba is there (at
any size), so a run is still the same in every process of a machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from fleetsim import environment

MIN_ROWS = 128
# A kernel that runs once in a while (the box refresh after a spawn) loads Numba by itself only
# for this many rows; below, it waits until a per-step kernel has loaded it.
ONE_OFF_ROWS = 2048

_loaded = [False]
_eager = [False]


@functools.cache
def compiled(function: Callable[..., Any]) -> Callable[..., Any] | None:
    """`function` compiled by Numba (cached on disk), or None without Numba or with
    `FLEETSIM_NO_NUMBA`."""
    if not environment.numba_allowed():
        return None
    try:
        import numba
    except ImportError:
        return None
    _loaded[0] = True
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)


def compiled_together(
    namespace: dict[str, Any], helpers: tuple[str, ...], entry: Callable[..., Any]
) -> Callable[..., Any] | None:
    """`entry` compiled with the functions it calls, `helpers` (names in `namespace`, a
    module's globals), each compiled and put in its place there (a compiled function calls
    only compiled ones); None without Numba."""
    done = {name: compiled(namespace[name]) for name in helpers}
    if any(f is None for f in done.values()):
        return None
    namespace.update(done)
    return compiled(entry)


def compiled_prefetching(namespace: dict[str, Any], entry: Callable[..., Any]) -> Any:
    """`compiled(entry)` for a kernel that asks for rows ahead with `prefetch(array, row)` or
    `prefetch_write(array, row)`: those names in `namespace` (the module's globals, where
    placeholders stand) become `fleetsim.hints`'s first; None without Numba."""
    if not environment.numba_allowed():
        return None
    try:
        from fleetsim import hints
    except ImportError:
        return None
    namespace["prefetch"], namespace["prefetch_write"] = hints.prefetch, hints.prefetch_write
    return compiled(entry)


def prepare(rows: int) -> bool:
    """Load Numba and start its compiler now, for a fleet of `rows` robots whose steps will use
    the kernels (from `MIN_ROWS`): the scenario builder calls this once the world is built, so
    that the first step does not wait about a quarter of a second for it. Whether it did (not
    below `MIN_ROWS`, nor without Numba)."""
    if rows < MIN_ROWS:
        return False
    kernel = compiled(_first)
    if kernel is None:
        return False
    import numpy as np

    kernel(np.zeros(1))  # (the first call of any kernel starts the compiler's machinery)
    return True


def _first(values: Any) -> int:
    return int(values.shape[0])


def warm() -> bool:
    """Load Numba now and use the kernels at every size from here on: for a process that runs
    many simulations one after another (a sweep's or a fuzz's worker), where half a second
    once is nothing. Whether Numba is there (and allowed)."""
    import importlib

    if not environment.numba_allowed():
        return False
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    _loaded[0] = _eager[0] = True
    return True


def eager() -> bool:
    """Whether kernels are used at every size (`warm` was called in this process)."""
    return _eager[0]


def enough(rows: int, min_rows: int) -> bool:
    """Whether a per-step kernel should take `rows` rows (its module's threshold `min_rows`,
    `MIN_ROWS` unless changed): from `min_rows`; at every size in a warm process; and from an
    eighth of it once Numba is loaded anyway (a large site's collision check loaded it: its
    few robots on the move then drive compiled too, a kernel call costing less than the NumPy
    path's dozens of calls)."""
    return rows >= min_rows or _eager[0] or (_loaded[0] and rows >= min_rows // 8)


def worth_loading(rows: int) -> bool:
    """Whether a kernel used once in a while should take `rows` rows as far as loading Numba
    goes: always once a kernel of the step has loaded it, else from `ONE_OFF_ROWS` rows. (A
    fleet of 100 robots whose first box refresh also covers its racks does not pay half a
    second to load Numba.)"""
    return _loaded[0] or rows >= ONE_OFF_ROWS
