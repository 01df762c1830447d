"""`CollisionSystem`: which bodies touch, from the body arrays, checked as often as asked.

A check: refresh world AABBs of moved rows; broadphase over the moving bodies (not DISABLED or
STATIC) and, through an index of the static ones built once, between moving and static bodies
(STATIC with STATIC is never a collision; no STATIC at all when static collisions are ignored);
drop pairs of a parent with a child attached to it; confirm with the narrow phase ("aabb",
"closest_points" or "contact_points"); then compare with the previous pairs to find the ones
that started and ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fleetsim.backend import Backend
from fleetsim.collision import broadphase
from fleetsim.collision.aabb import refresh_moved_aabbs
from fleetsim.collision.box_pairs import ASK, TOUCHING, classify_pairs, touching_only
from fleetsim.collision.broadphase import (
    candidate_pairs,
    small_scene_pairs,
    suggested_cell_size,
)
from fleetsim.collision.intended import IntendedContacts
from fleetsim.collision.kinds import PAIR_KINDS, pair_kind_counts
from fleetsim.collision.last_check import Groups, LastCheck
from fleetsim.collision.pairs import (
    Pair,
    changes,
    key_handles,
    key_pairs,
    pair_key,
    unique_sorted,
)
from fleetsim.collision.static_index import StaticIndex
from fleetsim.geometry.vectors import any_set, same_values
from fleetsim.state import BodyTable, CollisionMode

IntArray = np.ndarray

NARROW_PHASES = ("aabb", "closest_points", "contact_points")


@dataclass
class CellSizePolicy:
    """Chooses the hash cell size: fixed, measured once, or re-measured as the fleet grows.

    "auto_adaptive" re-measures only when the number of bodies has doubled or halved since the
    last measurement, so adding bodies one at a time costs amortised O(1) each.
    """

    mode: str = "auto_adaptive"
    constant: float | None = None
    cell_size: float | None = None
    sized_for: int = 0
    resizes: int = 0

    def size(self, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray | None = None) -> float:
        """The cell size for bodies with boxes `lo`..`hi` (those `rows` of them, when given),
        as the mode says (measured once, again when the count doubles or halves, or
        constant)."""
        n = len(lo) if rows is None else len(rows)
        if self.mode == "constant" and self.constant is not None:
            return self.constant
        stale = self.cell_size is None or (
            self.mode == "auto_adaptive" and (n > 2 * self.sized_for or 2 * n < self.sized_for)
        )
        if stale and n:
            self.cell_size = suggested_cell_size(
                *((lo, hi) if rows is None else (lo[rows], hi[rows]))
            )
            self.sized_for = n
            self.resizes += 1
        return self.cell_size or 1.0


_NO_KEYS = np.empty(0, dtype=np.int64)


@dataclass
class CheckResult:
    """Pairs touching now, and the pairs that started and ended since the last check, as sorted
    int64 keys (see `pair_key`); `started` and `ended` give them as (handle, handle) tuples,
    made only when asked for (a big fleet's thousands of contacts a step, often unread)."""

    keys: np.ndarray = field(default_factory=lambda: _NO_KEYS)
    started_keys: np.ndarray = field(default_factory=lambda: _NO_KEYS)
    ended_keys: np.ndarray = field(default_factory=lambda: _NO_KEYS)

    @property
    def started(self) -> list[Pair]:
        """The pairs that began to touch at this check."""
        return key_pairs(self.started_keys)

    @property
    def ended(self) -> list[Pair]:
        """The pairs that stopped touching at this check."""
        return key_pairs(self.ended_keys)


class CollisionSystem:
    """A simulation's collision checks (`sim.collisions`): broadphase over the body table, the
    narrow phase on its pairs, the pairs touching now and the episodes they began."""

    def __init__(
        self,
        bodies: BodyTable,
        backend: Backend,
        sync_rows: Callable[[IntArray], None],
        *,
        narrow_phase: str = "closest_points",
        margin: float = 0.0,
        footprints: bool = True,
        ignore_static: bool = False,
        cell_size_mode: str = "auto_adaptive",
        cell_size: float | None = None,
    ) -> None:
        self.bodies = bodies
        self.backend = backend
        self._sync_rows = sync_rows
        self.narrow_phase = narrow_phase
        self.margin = margin
        self.footprints = footprints
        self.ignore_static = ignore_static
        self.cells = CellSizePolicy(cell_size_mode, cell_size)
        self.active = np.empty(0, dtype=np.int64)  # sorted pair keys
        self.started = np.empty(0, dtype=np.int64)  # keys of the pairs the last check began
        self.checks = 0  # checks run since the start (recorders read `started` once per check)
        self.intended = IntendedContacts()  # a gripper on what it picks is not a collision
        self.static_index = StaticIndex()
        self.started_count = 0
        self._started_by_kind = np.zeros(len(PAIR_KINDS), dtype=np.int64)
        self._last = LastCheck()  # what the last check read and found (see LastCheck)
        self.timings = {
            "collision_aabb": 0.0,
            "collision_broadphase": 0.0,
            "collision_narrowphase": 0.0,
        }

    @property
    def active_pairs(self) -> list[Pair]:
        """Pairs (body handles, smaller first) found by the last check."""
        return key_pairs(self.active)

    @property
    def started_by_kind(self) -> dict[str, int]:
        """Collision episodes by pair kind (see `collision.kinds.PAIR_KINDS`)."""
        return dict(zip(PAIR_KINDS, self._started_by_kind.tolist(), strict=True))

    def reset(self) -> None:
        """Forget the pairs, the intended contacts and the last check (the world was emptied)."""
        self._last.clear()
        self.active = self.started = np.empty(0, dtype=np.int64)
        self.intended.clear()
        self.started_count = 0
        self._started_by_kind[:] = 0
        self.cells = CellSizePolicy(self.cells.mode, self.cells.constant)
        self.static_index = StaticIndex()

    def check(self) -> CheckResult:
        """Run a full check and update the active pairs."""
        t0 = time.perf_counter()
        self.checks += 1
        self.started = self.active[:0]
        refresh_moved_aabbs(self.bodies)
        config = self._config()
        changed = None
        same = self._last.same_setup(self.bodies, config)
        if same:
            if self._last.unchanged(self.bodies):  # an idle fleet: the same pairs, for free
                self.timings = dict.fromkeys(self.timings, 0.0)
                return CheckResult(self.active)
            changed = self._last.changed(self.bodies, self.narrow_phase, self.footprints)
        t1 = time.perf_counter()
        groups = self._last.groups(self.bodies, self.ignore_static, same)
        rows_i, rows_j, partial = self._candidates(changed, groups)
        t2 = time.perf_counter()
        rows_i, rows_j = self._confirm(rows_i, rows_j)
        if partial:  # pairs of bodies that did not change stand as they were
            assert changed is not None
            kept_i, kept_j = self._last.kept(changed)
            rows_i, rows_j = np.concatenate((kept_i, rows_i)), np.concatenate((kept_j, rows_j))
        t3 = time.perf_counter()
        self.timings = {
            "collision_aabb": (t1 - t0) * 1e3,
            "collision_broadphase": (t2 - t1) * 1e3,
            "collision_narrowphase": (t3 - t2) * 1e3,
        }
        handles = self.bodies.handles
        keys = pair_key(handles[rows_i], handles[rows_j])
        now = unique_sorted(keys)
        self._last.remember(self.bodies, config, rows_i, rows_j, same)
        if same_values(now, self.active):  # the usual step: no contact started or ended
            return CheckResult(now)
        # Pairs of removed bodies end here too.
        new, ended = changes(now, self.active)
        result = CheckResult(now, new, ended)
        self.active, self.started = now, new
        self.started_count += len(new)
        if new.size:
            if now is keys:  # (the pairs in the rows' order: the new ones' rows are there)
                at = now.searchsorted(new)
                rows_a, rows_b = rows_i[at], rows_j[at]
            else:
                rows_a, rows_b = (self.bodies.rows(h) for h in key_handles(new))
            self._started_by_kind += pair_kind_counts(self.bodies, rows_a, rows_b)
        return result

    def _config(self) -> tuple[str, float, bool, bool, int]:
        return (
            self.narrow_phase,
            self.margin,
            self.footprints,
            self.ignore_static,
            self.intended.version,
        )

    def _candidates(
        self, changed: np.ndarray | None, groups: Groups
    ) -> tuple[IntArray, IntArray, bool]:
        """Row pairs whose boxes overlap, after the mode and attachment rules: in a small
        scene every moving body against every other body at once; else moving bodies with each
        other through the spatial hash, and with static ones through the static index (static
        pairs with each other are never formed). With `changed` (bool, N; see `LastCheck`), a
        scene whose static bodies all stayed tests only the changed moving bodies (a large
        one when they are at most `broadphase.PARTIAL_SHARE` of the moving ones, through the
        compiled grid), and the third value says so (True: only pairs with a changed body)."""
        b = self.bodies
        moving, fixed, ignore_z = groups.moving, groups.fixed, groups.planar
        if moving.size == 0:
            return moving, moving, False
        lo, hi = b["aabb_min"], b["aabb_max"]
        if self.margin > 0 and self.narrow_phase == "closest_points":
            lo, hi = lo - self.margin / 2, hi + self.margin / 2  # near misses reach the query
        partial = False
        if moving.size * (moving.size + fixed.size) > broadphase.SMALL_SCENE_PAIRS:
            found = None
            if changed is not None and not any_set(changed[fixed]):
                found = self._changed_pairs(lo, hi, moving, fixed, ignore_z, changed[moving])
            if found is None:
                i, j = self._indexed_pairs(lo, hi, moving, fixed, ignore_z)
            else:
                (i, j), partial = found, True
        elif changed is not None and not any_set(changed[fixed]):
            fresh = changed[moving]
            rest = np.concatenate((moving[~fresh], fixed))
            i, j = small_scene_pairs(lo, hi, moving[fresh], rest, ignore_z)
            partial = True
        else:
            i, j = small_scene_pairs(lo, hi, moving, fixed, ignore_z)
        handles, parent = b.handles, b["parent"]
        if groups.carried:  # a load and its carrier are not a collision
            keep = (parent[i] != handles[j]) & (parent[j] != handles[i])
            i, j = i[keep], j[keep]
        if self.intended:
            keep = self.intended.filter(b, i, j)
            i, j = i[keep], j[keep]
        return i, j, partial

    def _changed_pairs(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        moving: IntArray,
        fixed: IntArray,
        ignore_z: np.ndarray,
        fresh: np.ndarray,
    ) -> tuple[IntArray, IntArray] | None:
        """`_indexed_pairs` restricted to the pairs with a changed moving body (`fresh`, bool
        over `moving`) in a large scene: the grid as before, but only the changed bodies look
        round their cells (a fleet whose parked robots stand still). None when many changed
        or the compiled grid does not apply (`broadphase.candidate_pairs_of`)."""
        if not broadphase.partial_pays(int(np.count_nonzero(fresh)), moving.size):
            return None  # (before the masks and the cell size)
        use = np.zeros(len(lo), dtype=bool)
        use[moving] = True
        query = np.zeros(len(lo), dtype=bool)
        changed = moving[fresh]
        query[changed] = True
        cell = self.cells.size(lo, hi, moving)
        found = broadphase.candidate_pairs_of(lo, hi, cell, use, query, ignore_z)
        if found is None:
            return None
        i, j = found
        if fixed.size:
            si, sj = self.static_index.overlaps(lo, hi, changed, fixed, cell, ignore_z)
            i, j = np.concatenate((i, si)), np.concatenate((j, sj))
        return i, j

    def _indexed_pairs(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        moving: IntArray,
        fixed: IntArray,
        ignore_z: np.ndarray,
    ) -> tuple[IntArray, IntArray]:
        """Overlapping row pairs of a larger scene: moving bodies with each other through the
        spatial hash, and with the `fixed` ones through the static index."""
        if moving.size == len(lo):  # every body moves (no floor, no structure): no gathers
            cell = self.cells.size(lo, hi)
            i, j = candidate_pairs(lo, hi, cell, ignore_z)
        else:
            lo_m, hi_m = lo[moving], hi[moving]
            cell = self.cells.size(lo_m, hi_m)
            i, j = candidate_pairs(lo_m, hi_m, cell, ignore_z[moving])
            i, j = moving[i], moving[j]
        if fixed.size:
            si, sj = self.static_index.overlaps(lo, hi, moving, fixed, cell, ignore_z)
            i, j = np.concatenate((i, si)), np.concatenate((j, sj))
        return i, j

    def _confirm(self, i: IntArray, j: IntArray) -> tuple[IntArray, IntArray]:
        """Narrow phase. Pairs of single-box bodies, or of a box and a mobile robot's footprint
        (with `footprints`), are tested exactly with box geometry (no PyBullet call); pairs with
        a NORMAL_2D body keep their xy box test (PyBullet's queries are 3-D and would see the
        height the mode ignores); the rest ask PyBullet."""
        if self.narrow_phase == "aabb" or i.size == 0:
            return i, j
        b = self.bodies
        mode = b["collision_mode"]
        if self.narrow_phase == "closest_points":
            exact = b["exact_box"]
            shaped = b["footprint"] if self.footprints else exact  # a box for the narrow phase
            verdict = classify_pairs(
                i,
                j,
                mode,
                exact,
                shaped,
                b["pos"],
                b["quat"],
                b["aabb_local_min"],
                b["aabb_local_max"],
                self.margin / 2,
                b["level_kind"],
                b["level_box"],
            )
            found = touching_only(i, j, verdict)
            if found is not None:  # (no pair for PyBullet: the usual large fleet)
                return found
        else:  # contact points: only 2-D pairs are answered here
            planar = (mode[i] == int(CollisionMode.NORMAL_2D)) | (
                mode[j] == int(CollisionMode.NORMAL_2D)
            )
            verdict = np.where(planar, np.int8(TOUCHING), np.int8(ASK))
        keep, rest = verdict == TOUCHING, verdict == ASK
        if not any_set(rest):
            return i[keep], j[keep]
        qi, qj = i[rest], j[rest]
        self._sync_rows(np.unique(np.r_[qi, qj]))  # lazy sync: only bodies the query reads
        ids = b["body_id"]
        if self.narrow_phase == "contact_points":
            touching = self.backend.contact_pairs(ids[qi], ids[qj])
        else:
            touching = self.backend.closest_pairs(ids[qi], ids[qj], self.margin)
        return np.concatenate((i[keep], qi[touching])), np.concatenate((j[keep], qj[touching]))
