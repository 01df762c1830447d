"""Paths as the kit records and writes them: each robot's actions, one a tick, run-length
coded in chunks of 100 recorded ticks, each chunk written
`[(first tick,row,col,orientation,counter):(F 3,W 7,...)]`.

The kit writes every chunk with the state the robot had at its first record (chunk 0's
snapshot: the start), not the chunk's own; fleetsim writes the same, so the strings are the
kit's to the byte (a quirk kept, see docs/guides/lorr.md)."""

from __future__ import annotations

from fleetsim.lorr.mapf import Action

CHUNK = 100  # the kit's chunk size (hard-coded there; its -w option is parsed, not used)
LETTER = {Action.FW: "F", Action.CR: "R", Action.CCR: "C", Action.NA: "T", Action.W: "W"}


class PathRecorder:
    """The actions of `team` robots, tick by tick."""

    def __init__(self, team: int) -> None:
        self.runs: list[list[list[tuple[Action, int]]]] = [[[]] for _ in range(team)]
        self.counts = [0] * team
        self.first: list[tuple[int, int, int] | None] = [None] * team

    def record(self, robot: int, action: Action, location: int, orientation: int,
               count: int) -> None:  # fmt: skip
        """One tick of `robot`: its action and the state it started the tick in."""
        chunks = self.runs[robot]
        if self.counts[robot] == CHUNK:
            chunks.append([])
            self.counts[robot] = 0
        if self.first[robot] is None:
            self.first[robot] = (location, orientation, count)
        runs = chunks[-1]
        if runs and runs[-1][0] == action:
            runs[-1] = (action, runs[-1][1] + 1)
        else:
            runs.append((action, 1))
        self.counts[robot] += 1

    def decoded(self, robot: int) -> list[Action]:
        """Every recorded action of `robot`, one a tick."""
        return [a for chunk in self.runs[robot] for a, n in chunk for _ in range(n)]

    def to_json(self, cols: int, ticks: int) -> list[str]:
        """One string a robot, as the kit writes it (`ticks`: the run's length, which sets
        how many chunks there are, empty ones included)."""
        out = []
        for robot, chunks in enumerate(self.runs):
            location, orientation, count = self.first[robot] or (0, 0, 0)
            row, col = divmod(location, cols)
            wanted = max(len(chunks), -(-ticks // CHUNK))
            parts = []
            for k in range(wanted):
                runs = chunks[k] if k < len(chunks) else []
                body = ",".join(f"{LETTER[a]} {n}" for a, n in runs)
                parts.append(f"[({k * CHUNK},{row},{col},{orientation},{count}):({body})]")
            out.append("".join(parts))
        return out
