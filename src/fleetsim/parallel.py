"""Both cores for the largest per-step work: a kernel over tens of thousands of rows runs in
halves, one in this thread and one in a helper thread, when `FLEETSIM_THREADS` allows two
(`environment.threads`; the default on a machine with two cores or more).

Only work that splits into independent halves is run this way: rows of a table (each half
writes its own rows), pairs of bodies (each half writes its own verdicts), columns of the
broadphase grid (each half its own pairs, joined in order). The compiled kernels release
the GIL (`jit.compiled`: `nogil`), and so do NumPy's ufuncs on large arrays, so the halves run
at once; the answers are the same numbers as in one piece. Below `MIN_ROWS` rows
(`ROW_KERNEL_ROWS` for the kernels over moving robots' rows, which do more a row) the
hand-over costs more than it saves. The helper thread is made on first use and
forgotten in a forked child (which has no such thread).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from fleetsim import environment

T = TypeVar("T")

MIN_ROWS = 20_000  # rows (or pairs) from which work is split over two threads
# ... and from which the kernels of moving robots' rows (the drive, the turn, the boxes), which
# do more a row, are: measured with the hand-over of `Helper`
ROW_KERNEL_ROWS = 8_000
HELPER = "fleetsim-half"  # the helper thread's name

_helpers: list[Helper | None] = [None]  # (this process's one helper, once made)
_lock = threading.Lock()
_one = [False]  # `one_thread` was called


def one_thread() -> None:
    """Keep this process's work to one thread, whatever `FLEETSIM_THREADS` says: for a
    process that runs beside others on the same cores (a sweep's worker)."""
    _one[0] = True


def halves(n: int, min_rows: int | None = None) -> list[tuple[int, int]]:
    """[(start, stop)] ranges covering range(n): two halves from `min_rows` (default
    `MIN_ROWS`) when two threads are allowed, else one."""
    if (
        n < (MIN_ROWS if min_rows is None else min_rows)
        or n < 2
        or _one[0]
        or environment.threads() < 2
    ):
        return [(0, n)]
    middle = n // 2
    return [(0, middle), (middle, n)]


def run(tasks: list[Callable[[], T]]) -> list[T]:
    """Each task's result, in order: the first run in this thread, the others in the helper
    thread meanwhile (one task, tasks asked for from the helper thread itself, or while
    another thread has the helper: one after the other here). An error is raised here
    after every task has finished: this thread's task's, else the helper's."""
    if len(tasks) == 1 or threading.current_thread().name.startswith(HELPER):
        return [task() for task in tasks]  # (one task; or asked from the helper itself)
    helper = _helper()
    if not helper.lock.acquire(blocking=False):  # (another thread's tasks have it)
        return [task() for task in tasks]
    try:
        rest = tasks[1:]
        helper.submit(lambda: [task() for task in rest])
        try:
            first = tasks[0]()
        finally:
            others, error = helper.outcome()  # (waits; this thread's error goes first)
    finally:
        helper.lock.release()
    if error is not None:
        raise error
    return [first, *others]


class Helper:
    """The helper thread: it runs one task at a time, handed over through `flags` (int64:
    requests made, requests done, whether it sleeps). A step hands half a kernel over eight
    times or more, and waking a sleeping thread costs tens of microseconds on many machines,
    as much as some halves; so with Numba each side watches the other's counter for a while
    without the GIL (`fleetsim.spin`) before it sleeps, and the helper counts a task done
    only once it has let go of the GIL (a caller that saw it done and wanted the GIL back
    while the helper held it would sleep till the helper let go). Without Numba both sleep
    on a condition at once."""

    REQUESTS, DONE, ASLEEP = range(3)
    SPINS = 1 << 21  # reads of a flag before sleeping (about a millisecond)
    POLL = 1e-4  # s: a caller sleeping on a long task looks again this often (with Numba)

    def __init__(self) -> None:
        self.lock = threading.Lock()  # held by the thread whose tasks the helper runs
        self.flags = np.zeros(3, dtype=np.int64)
        self._spin = _spin()
        self._task: Callable[[], Any] | None = None
        self._outcome: tuple[Any, BaseException | None] = (None, None)
        self._wake = threading.Condition()
        threading.Thread(target=self._serve, name=HELPER, daemon=True).start()

    def submit(self, task: Callable[[], Any]) -> None:
        """Hand `task` to the helper (the caller holds `lock`)."""
        self._task = task
        self.flags[self.REQUESTS] += 1
        if self.flags[self.ASLEEP]:
            with self._wake:
                self._wake.notify_all()

    def outcome(self) -> tuple[Any, BaseException | None]:
        """The submitted task's (result, error), once it is done."""
        asked = int(self.flags[self.REQUESTS])
        spin = self._spin
        if spin is None or not spin.watch(self.flags, self.DONE, asked, self.SPINS):
            with self._wake:
                while self.flags[self.DONE] < asked:
                    self._wake.wait(None if spin is None else self.POLL)
        outcome, self._outcome = self._outcome, (None, None)
        return outcome

    def _serve(self) -> None:
        done = 0
        while True:
            if not self._finish(done):
                with self._wake:
                    self.flags[self.ASLEEP] = 1
                    while self.flags[self.REQUESTS] <= done:
                        self._wake.wait()
                    self.flags[self.ASLEEP] = 0
            done += 1
            task, self._task = self._task, None
            try:
                assert task is not None
                self._outcome = (task(), None)
            except BaseException as error:  # (raised in the caller's thread)
                self._outcome = (None, error)

    def _finish(self, done: int) -> bool:
        """Count `done` tasks done, then watch for the next request: whether it came."""
        spin = self._spin
        if spin is None:
            with self._wake:
                self.flags[self.DONE] = done
                self._wake.notify_all()
            return False
        came: bool = spin.publish_then_watch(
            self.flags, self.DONE, done, self.REQUESTS, done + 1, self.SPINS
        )
        return came


def _spin() -> Any:
    """The module `fleetsim.spin`, or None without Numba (or with it turned off)."""
    if not environment.numba_allowed():
        return None
    try:
        from fleetsim import spin
    except ImportError:
        return None
    return spin


def _helper() -> Helper:
    with _lock:
        helper = _helpers[0]
        if helper is None:
            helper = _helpers[0] = Helper()
        return helper


def _forget() -> None:
    """In a forked child: the parent's helper thread is not there; make a new one when
    needed."""
    global _lock
    _helpers[0] = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget)
