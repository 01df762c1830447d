"""How a grid step's conflicts resolve, each rule one function over arrays of cell numbers:
`here` (agents,) where each live agent is, `want` where each asks to go (a wall already
turned into a wait), `active` which are on the map; each returns where they end.

- `block` (MAPF's rules): agents that would meet in a cell (a vertex conflict) or swap cells
  (an edge conflict) all stay, and so, in turn, does anyone moving into a cell whose agent
  stays; an agent may follow another into the cell it leaves;
- `block_both` (POGEMA's `block_both`): a move into a cell that an agent held at the start of
  the step is refused (no following); of the others, moves into the same cell all stay;
- `priority` (POGEMA's `priority`): agents move one after another by index, each into its
  cell if no one holds it at that moment.

The buffers are (cells,) scratch arrays the caller keeps: `occupant` all -1, `count` all 0,
`first` any; they are left as they were given.
"""

from __future__ import annotations

import numpy as np


def block(
    here: np.ndarray, want: np.ndarray, active: np.ndarray, occupant: np.ndarray, count: np.ndarray
) -> np.ndarray:
    """MAPF's rules, to a fixed point (see the module's text)."""
    every = bool(active.all())
    index = np.arange(len(here))
    held = here if every else here[active]
    occupant[held] = index if every else index[active]
    try:
        for _ in range(len(here) + 1):
            movers = want != here
            if not every:
                movers &= active
            if not movers.any():
                return want
            j = occupant[want]  # (who holds the cell asked for)
            swap = movers & (j >= 0)
            swap[swap] = want[j[swap]] == here[swap]
            asked = want if every else want[active]
            np.add.at(count, asked, 1)
            contested = movers & (count[want] > 1)
            count[asked] = 0
            stay = swap | contested
            if not stay.any():
                return want
            want = np.where(stay, here, want)
        return want
    finally:
        occupant[held] = -1


def block_both(
    here: np.ndarray, want: np.ndarray, active: np.ndarray, occupant: np.ndarray, count: np.ndarray
) -> np.ndarray:
    """POGEMA's `block_both` (see the module's text): one pass."""
    held = here[active]
    occupant[held] = 1
    try:
        movers = (want != here) & active
        refused = movers & (occupant[want] > 0)
        want = np.where(refused, here, want)
        movers &= ~refused
        asked = want[active]
        np.add.at(count, asked, 1)
        contested = movers & (count[want] > 1)
        count[asked] = 0
        return np.where(contested, here, want)
    finally:
        occupant[held] = -1


def priority(
    here: np.ndarray, want: np.ndarray, active: np.ndarray, occupant: np.ndarray, first: np.ndarray
) -> np.ndarray:
    """POGEMA's `priority`: agent i moves if no agent j > i held its cell at the start and no
    agent j < i ends there. Each agent depends only on those before it, so iterating from
    everyone moving settles, after as many rounds as the longest chain of such waits, on what
    moving one after another gives."""
    index = np.arange(len(here))
    held = here[active]
    occupant[held] = index[active]
    big = len(here)
    try:
        movers = (want != here) & active
        holder = occupant[want]
        later_holds = movers & (holder > index)
        candidates = movers & ~later_holds
        moved = candidates
        for _ in range(len(here) + 1):
            end = np.where(moved, want, here)
            live_end = end[active]
            first[live_end] = big
            np.minimum.at(first, live_end, index[active])
            now = candidates & (first[want] >= index)  # (no one before it ends there)
            if np.array_equal(now, moved):
                return np.where(moved, want, here)
            moved = now
        return np.where(moved, want, here)
    finally:
        occupant[held] = -1
