"""The crowd's compiled step (`fleetsim.people.kernel`) in two threads, for large crowds: the
people near each person in one thread while the walls and robots near each are found in the
other, then the people's pushes in one while the bearings from walls and robots are summed in
the other (`fleetsim.parallel`: the kernels release the GIL). The same compiled parts in the
same order as the one-thread step, so the same numbers to the last bit, whatever
`FLEETSIM_THREADS` says.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim import parallel
from fleetsim.people import kernel as K  # noqa: N812 (the kernel's parts: K._pushes, ...)

TWO_FROM = 4000  # people: below, the hand-over to the other thread costs more than it saves


def wanted(people: int) -> bool:
    """Whether a crowd of `people` takes the two-thread step (two threads allowed, Numba
    there, and enough people)."""
    return len(parallel.halves(people, TWO_FROM)) == 2 and K.available()


def step_in_two(
    x: Any, radius: Any, v0: Any, target: Any, dt: float, p: Any,
    seg: Any, wall: Any, wids: Any, wkeys: Any, wfirst: Any, rc: Any, rr: Any, rv: Any,
    work: Any,
) -> tuple[Any, ...]:  # fmt: skip
    """`kernel.step`'s answers (its arguments too), in two threads."""
    K.available()  # (the parts compiled, in the kernel module's names)
    order = K._grid(x, p[K.REACH])[0]
    xs, rs, v0s, ts = x[order], radius[order], v0[order], target[order]
    n = len(xs)
    pstart, wstart, rstart = (np.zeros(n + 1, np.int64) for _ in range(3))
    pj, ps, wk, wq, rk = work
    (pj, ps), (wk, wq, rk) = parallel.run([
        lambda: K._near_all(xs, p[K.REACH], pj, ps, pstart),
        lambda: K._near_others(xs, p, seg, wall, wids, wkeys, wfirst, rc, rr, wk, wq, wstart,
                               rk, rstart),
    ])  # fmt: skip
    push, bearing = parallel.run([
        lambda: K._pushes(xs, rs, p, pj, ps, pstart),
        lambda: K._bearings(xs, rs, ts, p, wq, wstart, rc, rr, rv, rk, rstart),
    ])  # fmt: skip
    e = K._ways(bearing, push)
    new_s, left_s, owner, robot, gap = K._finish(
        xs, rs, v0s, ts, dt, p, e, seg, wall, wids, wkeys, wfirst, rc, rr, pj, ps, pstart,
        wk, wq, wstart, rk, rstart,
    )  # fmt: skip
    return (*K._unsort(order, new_s, left_s, owner, robot, gap), (pj, ps, wk, wq, rk))
