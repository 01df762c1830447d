"""Asking the CPU for a row of an array before a kernel uses it (Numba; imported only with it).

`prefetch(array, row)`, called in a compiled kernel, starts loading the cache line where
`array[row]` (its first element, for a 2-D array's row) begins, and goes on at once: a kernel
that reads rows in an order the hardware cannot guess (the bodies of the narrow phase's pairs)
asks for the rows a few pairs ahead, so that their loads from memory overlap instead of
following one another. `prefetch_write(array, row)` does the same for a row the kernel is about
to write (the broadphase's counting sort, which places each body where its cell is). Neither
changes a value; an index out of the array is never read (a prefetch does not fault), but
callers keep to valid rows all the same.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_READ, _WRITE, _KEEP, _DATA = 0, 1, 3, 1  # llvm.prefetch: read or write, every cache level, data
# (the name without the pointer type's suffix, which differs between LLVM versions: LLVM
# renames it to its own on reading)
_NAME = "llvm.prefetch"
_item_pointer: Any = cgutils.get_item_pointer
_function: Any = cgutils.get_or_insert_function


def _typed(write: int) -> Any:
    """The typing of a prefetch of `array[row]` (row 0 of its other axes) for reading (0) or
    writing (1): `llvm.prefetch` of that element's address."""

    def typed(typingctx: Any, array: Any, row: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            kind = sig.args[0]
            view = context.make_array(kind)(context, builder, args[0])
            zero = context.get_constant(types.intp, 0)
            at = _item_pointer(context, builder, kind, view, [args[1]] + [zero] * (kind.ndim - 1))
            byte = ir.IntType(8).as_pointer()
            word = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [byte, word, word, word])
            fn = _function(builder.module, fnty, _NAME)
            builder.call(fn, [builder.bitcast(at, byte), word(write), word(_KEEP), word(_DATA)])
            return context.get_dummy_value()

        return types.void(array, row), codegen

    return typed


prefetch: Any = intrinsic(_typed(_READ))
prefetch_write: Any = intrinsic(_typed(_WRITE))
