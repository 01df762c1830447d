"""Asking the CPU for a row of an array before a kernel reads it (Numba; imported only with it).

`prefetch(array, row)`, called in a compiled kernel, starts loading the cache line where
`array[row]` (its first element, for a 2-D array's row) begins, and goes on at once: a kernel
that reads rows in an order the hardware cannot guess (the bodies of the narrow phase's pairs)
asks for the rows a few pairs ahead, so that their loads from memory overlap instead of
following one another. It changes no value; an index out of the array is never read (a
prefetch does not fault), but callers keep to valid rows all the same.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_READ, _KEEP, _DATA = 0, 3, 1  # llvm.prefetch: a read, kept in every cache level, data
# (the name without the pointer type's suffix, which differs between LLVM versions: LLVM
# renames it to its own on reading)
_NAME = "llvm.prefetch"
_item_pointer: Any = cgutils.get_item_pointer
_function: Any = cgutils.get_or_insert_function


def _prefetch_typed(typingctx: Any, array: Any, row: Any) -> Any:
    """`llvm.prefetch` of the address of `array[row]` (row 0 of its other axes)."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        kind = sig.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        at = _item_pointer(context, builder, kind, view, [args[1]] + [zero] * (kind.ndim - 1))
        byte = ir.IntType(8).as_pointer()
        word = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte, word, word, word])
        fn = _function(builder.module, fnty, _NAME)
        builder.call(fn, [builder.bitcast(at, byte), word(_READ), word(_KEEP), word(_DATA)])
        return context.get_dummy_value()

    return types.void(array, row), codegen


prefetch: Any = intrinsic(_prefetch_typed)
