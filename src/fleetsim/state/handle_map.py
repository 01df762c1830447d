"""`HandleMap`: the row of each handle a table issued, in pages that are given back.

Handles count up and are never reused, so a map with a slot per handle ever issued grows for
as long as bodies come and go (8 bytes a body: 8 MB a million spawn/remove cycles). Here the
slots live in pages of `PAGE` handles; a page all of whose handles were issued and removed
gives its memory back (it is filled with "dead" and reused for handles yet to come), and its
entry in the page table then points at one shared page that says "dead" for every handle. What
stays per handle ever issued is one page-table entry for every `PAGE` of them (16 bytes per
4,096 handles). A lookup is two gathers: the page's place, then the row.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS  # handles per page
MASK = PAGE - 1
DEAD_PAGE = 0  # where every released page's entry points: PAGE slots that say -1


class HandleMap:
    """Row of each issued handle (-1 for a removed one), in pages of `PAGE` handles.

    Callers only look up handles in `[0, issued)`.
    """

    def __init__(self) -> None:
        self._start = np.zeros(0, dtype=np.int64)  # where each page's slots start in `_rows`
        self._starts: list[int] = []  # the same, for one handle at a time (no NumPy scalars)
        self._in_order = 0  # handles below this are at PAGE + handle: one gather finds them
        self._live: list[int] = []  # live handles in each page
        self._rows = np.full(PAGE, -1, dtype=np.int64)  # the shared dead page, then the pages
        self._used = PAGE  # slots of `_rows` in pages (the rest is room to grow)
        self._spare: list[int] = []  # starts of pages given back, to use again
        self.issued = 0  # handles issued so far: the next one is this

    @property
    def nbytes(self) -> int:
        """Memory the map holds, bytes."""
        return int(self._start.nbytes + 2 * 8 * len(self._starts) + self._rows.nbytes)

    def issue(self, rows: IntArray) -> IntArray:
        """Issue `len(rows)` new handles naming `rows`; returns them."""
        first, n = self.issued, len(rows)
        handles = np.arange(first, first + n, dtype=np.int64)
        if n == 0:
            return handles
        self._add_pages(((first + n - 1) >> PAGE_BITS) + 1)
        pages = handles >> PAGE_BITS
        for page, count in enumerate(np.bincount(pages - pages[0]).tolist(), int(pages[0])):
            self._live[page] += count
        self._rows[self._start[pages] + (handles & MASK)] = rows
        self.issued = first + n
        return handles

    def issue_one(self, row: int) -> int:
        """Issue one new handle naming `row`; returns it."""
        handle = self.issued
        page = handle >> PAGE_BITS
        if page >= len(self._start):
            self._add_pages(page + 1)
        self._live[page] += 1
        self._rows[self._start[page] + (handle & MASK)] = row
        self.issued = handle + 1
        return handle

    def move(self, handle: int, row: int) -> None:
        """A live handle's body is at `row` now."""
        self._rows[self._start[handle >> PAGE_BITS] + (handle & MASK)] = row

    def remove(self, handle: int) -> None:
        """A live handle names no body from now on; its page is given back once every handle
        in it was issued and removed."""
        page = handle >> PAGE_BITS
        self._rows[self._start[page] + (handle & MASK)] = -1
        self._live[page] -= 1
        if self._live[page] == 0 and (page + 1) * PAGE <= self.issued:
            self._give_back(page)

    def row(self, handle: int) -> int:
        """Row of `handle`, -1 for a removed one."""
        found: int = self._rows.item(self._starts[handle >> PAGE_BITS] + (handle & MASK))
        return found

    def rows(self, handles: IntArray, top: int) -> IntArray:
        """Rows of `handles` (the largest of them `top`), -1 for removed ones."""
        if top < self._in_order:  # (robots spawned before bodies came and went, typically)
            found: IntArray = self._rows[PAGE:].take(handles)
        else:
            found = self._rows.take(self._start.take(handles >> PAGE_BITS) + (handles & MASK))
        return found

    def clear(self) -> None:
        """Every handle issued so far names no body; memory back to one page."""
        self._start[:] = DEAD_PAGE
        self._starts = [DEAD_PAGE] * len(self._starts)
        self._in_order = 0
        self._live = [0] * len(self._live)
        self._rows = np.full(PAGE, -1, dtype=np.int64)
        self._used = PAGE
        self._spare = []

    def _add_pages(self, count: int) -> None:
        """Pages (their slots) up to page `count - 1`: pages given back first, then new ones."""
        have = len(self._start)
        if count <= have:
            return
        reused = [self._spare.pop() for _ in range(min(count - have, len(self._spare)))]
        fresh = count - have - len(reused)
        if self._used + fresh * PAGE > len(self._rows):  # (room for twice as many: amortised)
            grown = np.full(max(self._used + fresh * PAGE, 2 * len(self._rows)), -1, np.int64)
            grown[: self._used] = self._rows[: self._used]
            self._rows = grown
        starts = np.arange(self._used, self._used + fresh * PAGE, PAGE, dtype=np.int64)
        self._used += fresh * PAGE
        self._start = np.concatenate([self._start, np.array(reused, dtype=np.int64), starts])
        self._starts = self._start.tolist()
        self._find_in_order()
        self._live += [0] * (count - have)

    def _give_back(self, page: int) -> None:
        start = int(self._start[page])
        if start != DEAD_PAGE:
            self._rows[start : start + PAGE] = -1
            self._spare.append(start)
            self._start[page] = self._starts[page] = DEAD_PAGE
            self._find_in_order()

    def _find_in_order(self) -> None:
        """The first page not at its place in order (page p at (p + 1) * PAGE)."""
        out = np.flatnonzero(self._start != (np.arange(len(self._start)) + 1) * PAGE)
        self._in_order = (int(out[0]) if len(out) else len(self._start)) * PAGE
