"""Paths as the kit records and writes them: each robot's actions, one a tick, run-length
coded in chunks of 100 recorded ticks, each chunk written
`[(first tick,row,col,orientation,counter):(F 3,W 7,...)]`.

The kit writes every chunk with the state the robot had at its first record (chunk 0's
snapshot: the start), not the chunk's own; fleetsim writes the same, so the strings are the
kit's to the byte (a quirk kept, see docs/guides/lorr.md).

A tick is recorded for every robot at once (one byte a robot: 100 MB for 10,000 robots over
5,000 ticks, both the planned and the actual paths)."""

from __future__ import annotations

import numpy as np

from fleetsim.lorr.mapf import Action

CHUNK = 100  # the kit's chunk size (hard-coded there; its -w option is parsed, not used)
LETTER = {Action.FW: "F", Action.CR: "R", Action.CCR: "C", Action.NA: "T", Action.W: "W"}
BLOCK = 256  # ticks a block of the record holds


class PathRecorder:
    """The actions of `team` robots, tick by tick."""

    def __init__(self, team: int) -> None:
        self.team = team
        self.blocks: list[np.ndarray] = []
        self.ticks = 0
        self.first: np.ndarray | None = None  # (team, 3): location, orientation, counter

    def record(
        self, actions: np.ndarray, location: np.ndarray, orientation: np.ndarray, count: np.ndarray
    ) -> None:
        """One tick of every robot: its action and the state it started the tick in."""
        if self.first is None:
            self.first = np.stack([location, orientation, count], axis=1).astype(np.int64)
        at = self.ticks % BLOCK
        if at == 0:
            self.blocks.append(np.empty((BLOCK, self.team), dtype=np.int8))
        self.blocks[-1][at] = actions
        self.ticks += 1

    def table(self) -> np.ndarray:
        """(ticks, team) int8: every recorded action."""
        if not self.blocks:
            return np.empty((0, self.team), dtype=np.int8)
        return np.concatenate(self.blocks)[: self.ticks]

    def decoded(self, robot: int) -> list[Action]:
        """Every recorded action of `robot`, one a tick."""
        column = [blk[:, robot] for blk in self.blocks]
        values = np.concatenate(column)[: self.ticks] if column else np.empty(0, np.int8)
        return [Action(int(v)) for v in values]

    def to_json(self, cols: int, ticks: int) -> list[str]:
        """One string a robot, as the kit writes it (`ticks`: the run's length, which sets
        how many chunks there are, empty ones included)."""
        table = self.table()
        chunks = max(-(-self.ticks // CHUNK), -(-ticks // CHUNK))
        letters = {int(a): s for a, s in LETTER.items()}
        out = []
        for robot in range(self.team):
            column = table[:, robot]
            if self.first is not None:
                location, orientation, count = (int(v) for v in self.first[robot])
            else:
                location, orientation, count = 0, 0, 0
            row, col = divmod(location, cols)
            parts = []
            for k in range(chunks):
                piece = column[k * CHUNK : (k + 1) * CHUNK]
                body = ",".join(f"{letters[int(piece[s])]} {e - s}" for s, e in _runs(piece))
                parts.append(f"[({k * CHUNK},{row},{col},{orientation},{count}):({body})]")
            out.append("".join(parts))
        return out


def _runs(values: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of equal values."""
    if not len(values):
        return []
    edges = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [len(values)]))
    return list(zip(starts.tolist(), ends.tolist(), strict=True))
