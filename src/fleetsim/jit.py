"""Optional compilation with Numba (`pip install "fleetsim[fast]"`) of the kernels that large
fleets spend their steps in (`fleetsim.collision.kernels`, `fleetsim.control.kernels`).

`compiled(f)` is `f` compiled (cached on disk, so only the first run on a machine compiles; a
division by zero gives inf or NaN as in NumPy), or None without Numba or with
`FLEETSIM_NO_NUMBA=1`; callers then use their NumPy path. Kernels
are used from `MIN_ROWS` rows up: they are faster at every size, but Numba takes half a second
to import, which a short run of a small fleet (a step well under a millisecond) would notice.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

MIN_ROWS = 128


@functools.cache
def compiled(function: Callable[..., Any]) -> Callable[..., Any] | None:
    if os.environ.get("FLEETSIM_NO_NUMBA"):
        return None
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)
