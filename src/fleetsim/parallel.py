"""Both cores for the largest per-step work: a kernel over tens of thousands of rows runs in
halves, one in this thread and one in a helper thread, when `FLEETSIM_THREADS` allows two
(`environment.threads`; the default on a machine with two cores or more).

Only work that splits into independent halves is run this way: rows of a table (each half
writes its own rows), pairs of bodies (each half writes its own verdicts), columns of the
broadphase grid (each half its own pairs, joined in order). The compiled kernels release
the GIL (`jit.compiled`: `nogil`), and so do NumPy's ufuncs on large arrays, so the halves run
at once; the answers are the same numbers as in one piece. Below `MIN_ROWS` rows the hand-off
(tens of microseconds) costs more than it saves. The helper thread is made on first use and
forgotten in a forked child (which has no such thread).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from fleetsim import environment

T = TypeVar("T")

MIN_ROWS = 20_000  # rows (or pairs) from which work is split over two threads
HELPER = "fleetsim-half"  # the helper thread's name

_pool: list[ThreadPoolExecutor | None] = [None]
_lock = threading.Lock()
_one = [False]  # `one_thread` was called


def one_thread() -> None:
    """Keep this process's work to one thread, whatever `FLEETSIM_THREADS` says: for a
    process that runs beside others on the same cores (a sweep's worker)."""
    _one[0] = True


def halves(n: int, min_rows: int = MIN_ROWS) -> list[tuple[int, int]]:
    """[(start, stop)] ranges covering range(n): two halves from `min_rows` when two threads
    are allowed, else one."""
    if n < min_rows or n < 2 or _one[0] or environment.threads() < 2:
        return [(0, n)]
    middle = n // 2
    return [(0, middle), (middle, n)]


def run(tasks: list[Callable[[], T]]) -> list[T]:
    """Each task's result, in order: the first run in this thread, the others in the helper
    thread meanwhile (one task, or tasks asked for from the helper thread itself: one after
    the other here). The first error raised is raised here, after every task has finished."""
    if len(tasks) == 1 or threading.current_thread().name.startswith(HELPER):
        return [task() for task in tasks]  # (one task; or asked from the helper itself)
    pool = _helper()
    futures: list[Future[T]] = [pool.submit(task) for task in tasks[1:]]
    try:
        first = tasks[0]()
    finally:
        for future in futures:
            future.exception()  # (waits)
    return [first, *(future.result() for future in futures)]


def _helper() -> ThreadPoolExecutor:
    with _lock:
        pool = _pool[0]
        if pool is None:
            pool = _pool[0] = ThreadPoolExecutor(1, thread_name_prefix=HELPER)
        return pool


def _forget() -> None:
    """In a forked child: the parent's helper thread is not there; make a new one when
    needed."""
    global _lock
    _pool[0] = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget)
