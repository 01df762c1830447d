"""Waiting for another thread by watching a flag in memory (Numba; imported only with it).

`watch(flags, index, value, spins)` reads `flags[index]` (an int64 array shared by two
threads) up to `spins` times, without the GIL, until it is at least `value`: True when it
got there, False when it gave up. Each read is an atomic load with acquire order, so the
compiler reads memory every time (a plain load could be read once and kept), and what the
other thread wrote before it raised the flag is seen after. `publish_then_watch` raises one
flag (an atomic store with release order) once the GIL is let go, then watches another.
Python raises a flag with a plain store of an aligned int64, atomic on the machines Numba
runs on.
"""

from __future__ import annotations

from typing import Any

import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_item_pointer: Any = cgutils.get_item_pointer


def _load_typed(typingctx: Any, array: Any, index: Any) -> Any:
    """`array[index]` (int64, C-contiguous 1-D) read with an atomic acquire load."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        kind = sig.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        at = _item_pointer(context, builder, kind, view, [args[1]])
        return builder.load_atomic(at, "acquire", 8)

    return types.int64(array, index), codegen


def _store_typed(typingctx: Any, array: Any, index: Any, value: Any) -> Any:
    """`array[index] = value` (int64) with an atomic release store."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        kind = sig.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        at = _item_pointer(context, builder, kind, view, [args[1]])
        builder.store_atomic(args[2], at, "release", 8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


_load: Any = intrinsic(_load_typed)
_store: Any = intrinsic(_store_typed)


@numba.njit(cache=True, nogil=True)
def watch(flags: Any, index: int, value: int, spins: int) -> bool:
    """Whether `flags[index]` reached `value` within `spins` reads."""
    for _ in range(spins):  # noqa: SIM110 (compiled: a loop, not a generator)
        if _load(flags, index) >= value:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def publish_then_watch(
    flags: Any, index: int, value: int, watched: int, wanted: int, spins: int
) -> bool:
    """`flags[index] = value` once the GIL is let go, then `watch(flags, watched, wanted,
    spins)`."""
    _store(flags, index, value)
    return bool(watch(flags, watched, wanted, spins))
