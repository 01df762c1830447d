"""The kit's action model (its `ActionModelWithRotate`): one tick of every robot's requested
action, as the kit steps it, so that the same requests give the same moves, waits and error
reasons. Pure Python for now, written from the kit's rules (`../shared/lorr/README.md`).

- **Actions** FW, CR, CCR take `max_count` ticks: each executed tick raises the robot's
  counter, and the one that reaches `max_count` changes the cell or the heading and resets it.
  W changes nothing: a robot half-way along an edge stays there (paused).
- **Geometry** (float32, as the kit): a robot is a square of side `agent_size` with its lower
  corner at (column, row), moved `count / max_count` along its heading while a forward move is
  under way; a tick moves it linearly from where it was to where it will be. A request is
  invalid when its swept square leaves the map or touches an obstacle cell. Two motions
  collide when the squares overlap on an open interval of the tick (1e-6 of slack): touching
  is allowed.
- **Resolution**: robots are decided in index order. A robot's request stands if it is clear
  of every robot decided already and of every robot not yet decided whose *staying* would
  block it, deciding that one first (recursively); a robot met again on that chain is a cycle
  and the request fails. A failed request becomes W, with the reason.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from fleetsim.lorr.mapf import Action

F32 = np.float32
EPS = F32(1e-6)
UNSEEN, VISITING, DONE = 0, 1, 2
SYMBOL = {Action.FW: "F", Action.CR: "R", Action.CCR: "C", Action.W: "W", Action.NA: "NA"}


@dataclass(frozen=True)
class Pose:
    """A robot's state in the kit: location (row * cols + col), orientation (0 east, 1 south,
    2 west, 3 north), the counter of the action under way, and whether it is part-way along
    an edge (`moving`: the kit's Transition)."""

    location: int
    orientation: int = 0
    count: int = 0
    moving: bool = False


@dataclass(frozen=True)
class Motion:
    """A square's lower corner at the start and the end of the tick, and its side."""

    x0: np.float32
    y0: np.float32
    x1: np.float32
    y1: np.float32
    size: np.float32


@dataclass
class Tick:
    """What `ActionModel.step` decided: the actions executed, the poses after, and why each
    robot whose request failed waits (`cycles`: (robot, robot met again, description) of each
    dependency cycle found, in the order found)."""

    actions: list[Action]
    poses: list[Pose]
    reasons: dict[int, str] = field(default_factory=dict)
    cycles: list[tuple[int, int, str]] = field(default_factory=list)


class ActionModel:
    """The kit's action model on a grid `blocked` (rows * cols, 1 = obstacle)."""

    def __init__(
        self, blocked: np.ndarray, rows: int, cols: int, max_count: int, agent_size: float = 1.0
    ) -> None:
        self.blocked = np.asarray(blocked).reshape(-1)
        self.rows, self.cols, self.max_count = rows, cols, max_count
        self.size = F32(agent_size)
        self.moves = (1, cols, -1, -cols)

    # -- one robot ----------------------------------------------------------------------------

    def result(self, pose: Pose, action: Action) -> Pose:
        """The pose after one tick of `action` (no checks)."""
        if action not in (Action.FW, Action.CR, Action.CCR):
            return pose
        count = pose.count + 1
        done = count >= self.max_count
        if action == Action.FW:
            if done:
                return replace(
                    pose,
                    location=pose.location + self.moves[pose.orientation],
                    count=0,
                    moving=False,
                )
            return replace(pose, count=count, moving=True)
        if done:
            turn = 1 if action == Action.CR else 3
            return replace(pose, orientation=(pose.orientation + turn) % 4, count=0, moving=False)
        return replace(pose, count=count, moving=False)

    def corner(self, pose: Pose) -> tuple[np.float32, np.float32]:
        """The lower corner (x, y) of the robot's square: its cell, moved along its heading
        while a forward move is under way."""
        x, y = F32(pose.location % self.cols), F32(pose.location // self.cols)
        if pose.moving and self.max_count > 0 and pose.count > 0:
            frac = F32(pose.count) / F32(self.max_count)
            if pose.orientation == 0:
                x = x + frac
            elif pose.orientation == 1:
                y = y + frac
            elif pose.orientation == 2:
                x = x - frac
            elif pose.orientation == 3:
                y = y - frac
        return x, y

    # -- the tick -----------------------------------------------------------------------------

    def step(self, poses: list[Pose], actions: list[Action]) -> Tick:
        """One tick of every robot (`actions` per robot, in robot order)."""
        if len(poses) != len(actions):
            raise ValueError("one action a robot")
        return _Resolution(self, poses, [Action(a) for a in actions]).run()

    # -- geometry -----------------------------------------------------------------------------

    def motion(self, before: Pose, after: Pose) -> Motion:
        """The square's motion from `before` to `after`."""
        x0, y0 = self.corner(before)
        x1, y1 = self.corner(after)
        return Motion(x0, y0, x1, y1, self.size)

    def valid(self, after: Pose, motion: Motion) -> bool:
        """On the map and clear of obstacle cells all tick long."""
        if not 0 <= after.location < self.rows * self.cols:
            return False
        lo_x, lo_y, hi_x, hi_y = swept(motion)
        if lo_x < 0 or lo_y < 0 or hi_x > F32(self.cols) or hi_y > F32(self.rows):
            return False
        c0, r0, c1, r1 = self.cells(lo_x, lo_y, hi_x, hi_y)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                if self.blocked[r * self.cols + c] == 1:
                    wall = Motion(F32(c), F32(r), F32(c), F32(r), F32(1.0))
                    if collide(motion, wall):
                        return False
        return True

    def cells(
        self, lo_x: np.float32, lo_y: np.float32, hi_x: np.float32, hi_y: np.float32
    ) -> tuple[int, int, int, int]:
        """(c0, r0, c1, r1): the cells a box covers, clamped to the map."""
        return (
            max(0, math.floor(lo_x)),
            max(0, math.floor(lo_y)),
            min(self.cols - 1, math.ceil(hi_x) - 1),
            min(self.rows - 1, math.ceil(hi_y) - 1),
        )


def swept(m: Motion) -> tuple[np.float32, np.float32, np.float32, np.float32]:
    """(min x, min y, max x, max y) of the area a motion's square sweeps."""
    return (min(m.x0, m.x1), min(m.y0, m.y1), max(m.x0, m.x1) + m.size, max(m.y0, m.y1) + m.size)


def _open_interval(
    d0: np.float32, dv: np.float32, lower: np.float32, upper: np.float32
) -> tuple[np.float32, np.float32] | None:
    """The part of the tick [0, 1] where d0 + t dv lies strictly between lower and upper
    (with the kit's slack), or None."""
    if -EPS < dv < EPS:
        if lower + EPS < d0 < upper - EPS:
            return F32(0.0), F32(1.0)
        return None
    t0, t1 = (lower - d0) / dv, (upper - d0) / dv
    if t0 > t1:
        t0, t1 = t1, t0
    slack = EPS / F32(abs(dv))
    t0, t1 = max(F32(0.0), t0 + slack), min(F32(1.0), t1 - slack)
    return (t0, t1) if t0 <= t1 else None


def collide(a: Motion, b: Motion) -> bool:
    """Whether two moving squares overlap (open intervals: touching is allowed)."""
    ax0, ay0, ax1, ay1 = swept(a)
    bx0, by0, bx1, by1 = swept(b)
    if not (ax0 < bx1 and ax1 > bx0 and ay0 < by1 and ay1 > by0):
        return False
    d0x, d0y = a.x0 - b.x0, a.y0 - b.y0
    dvx, dvy = (a.x1 - a.x0) - (b.x1 - b.x0), (a.y1 - a.y0) - (b.y1 - b.y0)
    along_x = _open_interval(d0x, dvx, -a.size, b.size)
    if along_x is None:
        return False
    along_y = _open_interval(d0y, dvy, -a.size, b.size)
    if along_y is None:
        return False
    return bool(max(along_x[0], along_y[0]) <= min(along_x[1], along_y[1]))


class _Resolution:
    """One tick's decisions (`ActionModel.step`)."""

    def __init__(self, model: ActionModel, poses: list[Pose], actions: list[Action]) -> None:
        self.m, self.poses, self.requested = model, poses, actions
        n = len(poses)
        self.want = [model.result(p, a) for p, a in zip(poses, actions, strict=True)]
        self.stay = [model.result(p, Action.W) for p in poses]
        self.want_motion = [model.motion(p, q) for p, q in zip(poses, self.want, strict=True)]
        self.stay_motion = [model.motion(p, q) for p, q in zip(poses, self.stay, strict=True)]
        self.want_ok = [model.valid(q, m) for q, m in zip(self.want, self.want_motion, strict=True)]
        self.stay_ok = [model.valid(q, m) for q, m in zip(self.stay, self.stay_motion, strict=True)]
        self.bins: dict[int, list[int]] = {}
        for i, pose in enumerate(poses):  # each robot's square now, in the cells it covers
            x, y = model.corner(pose)
            c0, r0, c1, r1 = model.cells(x, y, x + model.size, y + model.size)
            for r in range(r0, r1 + 1):
                for c in range(c0, c1 + 1):
                    self.bins.setdefault(r * model.cols + c, []).append(i)
        self.status = [UNSEEN] * n
        self.decided: list[Motion | None] = [None] * n
        self.went = [False] * n
        self.reasons: dict[int, str] = {}
        self.cycles: list[tuple[int, int, str]] = []
        self.stack: list[int] = []

    def run(self) -> Tick:
        for i in range(len(self.poses)):
            self._resolve(i)
        actions = [a if self.went[i] else Action.W for i, a in enumerate(self.requested)]
        reasons = {}
        for i, (asked, done) in enumerate(zip(self.requested, actions, strict=True)):
            if done == Action.W and asked != Action.W:
                reasons[i] = self.reasons.get(
                    i, "requested motion rejected by recursive dependency resolution"
                )
        poses = [self.m.result(p, a) for p, a in zip(self.poses, actions, strict=True)]
        return Tick(actions, poses, reasons, self.cycles)

    def _resolve(self, i: int) -> bool:
        if self.decided[i] is not None:
            return self.went[i]
        if self.status[i] == VISITING:
            return False
        self.status[i] = VISITING
        self.stack.append(i)
        if not self._commit(i, True) and not self._commit(i, False):
            self.decided[i], self.went[i] = self.stay_motion[i], False  # (never undecided)
        self.stack.pop()
        self.status[i] = DONE
        return self.went[i]

    def _fail(self, i: int, asked: bool, reason: str) -> bool:
        if asked:
            self.reasons.setdefault(i, reason)
        return False

    def _commit(self, i: int, asked: bool) -> bool:
        """Decide robot i's request (`asked`) or its wait, if clear; whether it did."""
        if not (self.want_ok if asked else self.stay_ok)[i]:
            return self._fail(i, asked, "requested motion is invalid (boundary or hard obstacle)")
        motion = (self.want_motion if asked else self.stay_motion)[i]
        for j in self._near(i, motion):
            done = self.decided[j]
            if done is not None:
                if collide(motion, done):
                    return self._fail(
                        i, asked, f"requested motion conflicts with resolved agent {j}"
                    )
                continue
            if not (asked and self.stay_ok[j] and collide(motion, self.stay_motion[j])):
                continue  # j staying would not block i: no dependency
            if self.status[j] == VISITING:
                cycle = self._cycle(i, j)
                self.cycles.append((i, j, cycle))
                return self._fail(i, asked, cycle)
            moved = self._resolve(j)
            done = self.decided[j]
            if done is None:
                return self._fail(i, asked, f"dependency on agent {j} could not be resolved")
            if collide(motion, done):
                waited = "" if moved else " (agent waited)"
                return self._fail(i, asked, f"requested motion blocked by agent {j}{waited}")
        self.decided[i], self.went[i] = motion, asked
        return True

    def _near(self, i: int, motion: Motion) -> list[int]:
        """The robots whose squares now are in the cells about i's swept area, each once, in
        the order of the cells (rows, then columns) and of the robots in each."""
        m = self.m
        margin = F32(1.0) + m.size
        lo_x, lo_y, hi_x, hi_y = swept(motion)
        c0, r0, c1, r1 = m.cells(lo_x - margin, lo_y - margin, hi_x + margin, hi_y + margin)
        seen, out = {i}, []
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                for j in self.bins.get(r * m.cols + c, ()):
                    if j not in seen:
                        seen.add(j)
                        out.append(j)
        return out

    def _cycle(self, i: int, j: int) -> str:
        """The kit's description of the cycle robot i closed on robot j."""
        start = self.stack.index(j) if j in self.stack else 0
        chain = self.stack[start:]

        def held(a: int, b: int) -> bool:  # a wants the cell b stands on
            return self.want[a].location == self.poses[b].location

        occupancy = all(held(a, b) for a, b in itertools.pairwise(chain)) and held(i, j)
        kind = "occupancy-chain cycle" if occupancy else "directed physical-dependency cycle"
        parts = [self._describe(a) for a in chain]
        return f"{kind}: " + "".join(f"{p} -> " for p in parts) + self._describe(j)

    def _describe(self, a: int) -> str:
        act = SYMBOL[self.requested[a]]
        return f"a{a}(loc={self.poses[a].location}, act={act}, next={self.want[a].location})"


@dataclass
class ArrayTick:
    """`ActionModel.step_arrays`' answer: the actions executed and the poses after, as arrays
    (location, orientation, counter, part-way); `cycles` and `reasons` as `Tick`'s, made when
    read (most ticks' are never read)."""

    actions: np.ndarray
    location: np.ndarray
    orientation: np.ndarray
    count: np.ndarray
    moving: np.ndarray
    failed: np.ndarray  # robots whose request (not W) was refused
    codes: np.ndarray
    others: np.ndarray
    found: tuple[np.ndarray, ...]  # the kernel's cycle records and chains
    before: np.ndarray  # locations at the start of the tick
    wanted: np.ndarray  # where each request would have taken its robot
    requested: np.ndarray

    @functools.cached_property
    def cycles(self) -> list[tuple[int, int, str]]:
        """(robot, robot met again, description) of each dependency cycle, in order found."""
        cycle_i, cycle_j, cycle_start, cycle_len, chain = self.found
        location, want_loc, requested = self.before, self.wanted, self.requested

        def describe(a: int) -> str:
            act = SYMBOL[Action(int(requested[a]))]
            return f"a{a}(loc={int(location[a])}, act={act}, next={int(want_loc[a])})"

        out = []
        for k in range(len(cycle_i)):
            i, j = int(cycle_i[k]), int(cycle_j[k])
            robots = [int(a) for a in chain[cycle_start[k] : cycle_start[k] + cycle_len[k]]]
            held = all(want_loc[a] == location[b] for a, b in itertools.pairwise(robots))
            occupancy = held and want_loc[i] == location[j]
            kind = "occupancy-chain cycle" if occupancy else "directed physical-dependency cycle"
            text = f"{kind}: " + "".join(f"{describe(a)} -> " for a in robots) + describe(j)
            out.append((i, j, text))
        return out

    @property
    def reasons(self) -> dict[int, str]:
        """Why each robot whose request failed waits, as `Tick.reasons`."""
        return {
            int(i): _reason(int(self.codes[i]), int(self.others[i]), self.cycles)
            for i in self.failed
        }


def step_arrays(
    model: ActionModel,
    location: np.ndarray,
    orientation: np.ndarray,
    count: np.ndarray,
    moving: np.ndarray,
    requested: np.ndarray,
) -> ArrayTick | None:
    """`model.step` on arrays, compiled (`fleetsim.lorr.model_kernel`): the same decisions,
    reasons and cycles. None without Numba."""
    from fleetsim.lorr import model_kernel

    blocked = np.ascontiguousarray(model.blocked, dtype=np.uint8)
    shape = (model.rows, model.cols, model.max_count, model.size, EPS)
    out = model_kernel.step_arrays(location, orientation, count, moving, requested, blocked, *shape)
    if out is None:
        return None
    went, code, other, wanted, cycle_i, cycle_j, cycle_start, cycle_len, chain = out
    executed = np.where(went, requested, Action.W).astype(np.int64)
    # (a robot that waits keeps its pose; one that goes takes the pose its request leads to)
    before = (location, orientation, count, moving)
    loc, ori, cnt, mov = (np.where(went, w, now) for w, now in zip(wanted, before, strict=True))
    failed = np.flatnonzero(~went & (requested != Action.W))
    found = (cycle_i, cycle_j, cycle_start, cycle_len, chain)
    return ArrayTick(
        executed, loc, ori, cnt, mov, failed, code, other, found, location, wanted[0], requested
    )


def _reason(code: int, other: int, cycles: list[tuple[int, int, str]]) -> str:
    if code == 1:
        return "requested motion is invalid (boundary or hard obstacle)"
    if code == 2:
        return f"requested motion conflicts with resolved agent {other}"
    if code == 3:
        return f"requested motion blocked by agent {other}"
    if code == 4:
        return f"requested motion blocked by agent {other} (agent waited)"
    if code == 5:
        return cycles[other][2]
    return "requested motion rejected by recursive dependency resolution"
