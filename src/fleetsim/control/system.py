"""`MotionSystem`: moves every agent each step, one vectorised call per controller kind.

Agents driving to a goal, following a path or a velocity command cost array operations only.
Python runs per agent only at decisions: reaching a path waypoint (the next one is loaded) and
arriving (reported to the caller, which wakes that agent's action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fleetsim.control import kernels, omni_turn
from fleetsim.control.corners import corners as _corners
from fleetsim.control.differential import step_differential
from fleetsim.control.differential_kernel import LIMITS, differential_drive
from fleetsim.control.models import MotionModel, motion_model
from fleetsim.control.omni import Motion, step_omni
from fleetsim.control.omni_turn import TurnMemory
from fleetsim.control.velocity import step_velocity
from fleetsim.geometry import quat
from fleetsim.geometry.vectors import all_set, any_set, row_norm
from fleetsim.state import AgentTable, BodyTable, DriveState, MotionMode, rows_of

Limits = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Controller = MotionModel
Runner = Callable[[np.ndarray, Motion, Limits], tuple[Motion, np.ndarray, np.ndarray]]
PASSING = (step_omni, step_differential)  # built-ins that pass through waypoints

ANGLE_TOLERANCE_RAD = 1e-3
SETTLE_EPS = 1e-9
IntArray = np.ndarray


@dataclass
class _Path:
    positions: np.ndarray  # (N, 3)
    yaws: np.ndarray  # (N,)
    align: bool
    tolerance: float
    speed_limits: np.ndarray  # (N,) m/s of the leg that ends at each waypoint (inf: none)
    index: int = 0
    face: np.ndarray | None = None  # (N,) turn to the waypoint's yaw on the way there too


def _of(column: np.ndarray, rows: IntArray) -> np.ndarray:
    """column[rows] for sorted distinct `rows`: the column itself (a view, no copy) when they
    are every row."""
    out: np.ndarray = column if rows.size == len(column) else column[rows]
    return out


class MotionSystem:
    """Motion state of all agents (`agents` table) and the step that advances it."""

    def __init__(self, bodies: BodyTable) -> None:
        self.bodies = bodies
        self.agents = AgentTable()
        self._paths: dict[int, _Path] = {}
        self._turns = TurnMemory()  # the compiled turn's rows holding their heading

    # -- membership ---------------------------------------------------------------------------

    def add(self, body_handle: int, mode: int, limits: tuple[float, float, float, float]) -> int:
        """Add an agent for a body; limits (max_v, max_a, max_w, max_alpha). Returns its handle."""
        return int(self.add_many(np.array([body_handle]), mode, limits)[0])

    def add_many(
        self, body_handles: IntArray, mode: int, limits: tuple[float, float, float, float]
    ) -> IntArray:
        """`add` for many bodies with the same mode and limits; returns their handles."""
        max_v, max_a, max_w, max_alpha = limits
        return self.agents.add(
            len(body_handles),
            body=body_handles,
            mode=int(mode),
            max_v=max_v,
            max_a=max_a,
            max_w=max_w,
            max_alpha=max_alpha,
        )

    def remove(self, handle: int) -> None:
        """Take an agent's row out of the motion table."""
        self.agents.remove(handle)
        self._paths.pop(handle, None)

    def remove_body(self, body_handle: int) -> None:
        """Drop the agent driving this body, if any (the body is being removed)."""
        match = np.flatnonzero(self.agents["body"] == body_handle)
        for row in match:
            self.remove(int(self.agents.handles[row]))

    def clear(self) -> None:
        """Empty the motion table."""
        self.agents.clear()
        self._paths.clear()

    # -- commands -----------------------------------------------------------------------------

    def set_goal(
        self, handle: int, position: np.ndarray, yaw: float, align: bool, tolerance: float
    ) -> None:
        """Drive to `position` (3,), ending at `yaw` when `align`."""
        self._paths.pop(handle, None)
        self._target(self.agents.row(handle), position, yaw, align, tolerance, final=True)

    def set_goals(self, handles: IntArray, positions: np.ndarray, tolerance: float) -> None:
        """`set_goal` for many agents at once, each to its row of `positions` (n, 3), ending
        at whatever heading it arrives with."""
        for handle in np.asarray(handles).tolist() if self._paths else ():
            self._paths.pop(handle, None)
        self._target(self.agents.rows(handles), positions, 0.0, False, tolerance, final=True)

    def set_path(
        self,
        handle: int,
        positions: np.ndarray,
        yaws: np.ndarray,
        align: bool,
        tolerance: float,
        speed_limits: np.ndarray | None = None,
        face: np.ndarray | None = None,
    ) -> None:
        """Visit every waypoint in order, the last one aligned when `align`. Built-in motion
        modes pass through intermediate waypoints at a speed their limits allow for the turn
        there (omnidirectional: a velocity change of at most max_linear_accel * dt;
        differential: only straight on, else they stop and turn in place). `speed_limits` (N,)
        caps the leg that ends at each waypoint (m/s). `face` (N,) bool: turn to a waypoint's
        yaw while driving to it (an omnidirectional robot holding a heading along a lane)."""
        positions = np.asarray(positions, dtype=np.float64)
        n = len(positions)
        limits = np.full(n, np.inf) if speed_limits is None else np.asarray(speed_limits, float)
        body = int(self.agents["body"][self.agents.row(handle)])
        here = self.bodies["pos"][self.bodies.row(body)]
        # The robot's own position starts the first leg: a first waypoint on the way is one too.
        if n >= 2:
            points, legs = np.empty((n + 1, 3)), np.empty(n + 1)
            points[0], points[1:] = here, positions
            legs[0], legs[1:] = limits[0], limits
            keep = _corners(points, legs)[1:]
            if face is not None:  # a heading to hold on the way there: not to be merged away
                keep |= np.asarray(face, dtype=bool)
        else:
            keep = np.ones(n, dtype=bool)
        path = _Path(
            positions[keep],
            np.asarray(yaws, dtype=np.float64)[keep],
            align,
            tolerance,
            limits[keep],
            face=None if face is None else np.asarray(face, dtype=bool)[keep],
        )
        self._paths[handle] = path
        self._load_waypoint(handle, path)

    def extend_path(
        self,
        handle: int,
        positions: np.ndarray,
        yaws: np.ndarray,
        align: bool,
        tolerance: float,
        speed_limits: np.ndarray,
    ) -> bool:
        """Append waypoints to the path the agent is driving (traffic control granting more
        of a route), without disturbing its motion; the old last waypoint becomes one it drives
        through. Returns False, changing nothing, when it is not driving a path any more."""
        path = self._paths.get(handle)
        row = self.agents.row(handle)
        if (
            path is None
            or self.agents.views()["state"][row] != int(DriveState.GOAL)
            or not len(positions)
        ):
            return False
        was_last = path.index == len(path.positions) - 1
        path.positions = np.concatenate((path.positions, np.asarray(positions, dtype=np.float64)))
        path.yaws = np.concatenate((path.yaws, np.asarray(yaws, dtype=np.float64)))
        path.speed_limits = np.concatenate((path.speed_limits, np.asarray(speed_limits, float)))
        if path.face is not None:
            path.face = np.concatenate((path.face, np.zeros(len(positions), dtype=bool)))
        path.align, path.tolerance = align, tolerance
        if was_last:  # it was heading for the old end: now it drives through it
            self._load_waypoint(handle, path)
        return True

    def set_velocity(self, handle: int, vx: float, vy: float, wz: float, until: float) -> None:
        """Follow body-frame velocities until simulated time `until`, then brake to rest."""
        self.set_velocities(np.array([handle]), np.array([[vx, vy]]), np.array([wz]), until)

    def set_velocities(
        self, handles: np.ndarray, linear: np.ndarray, angular: np.ndarray, until: float
    ) -> None:
        """`set_velocity` for many agents at once: body-frame (vx, vy) `linear` (n, 2) and
        `angular` (n,), all until simulated time `until`."""
        if self._paths:
            for handle in np.asarray(handles).tolist():
                self._paths.pop(handle, None)
        a, rows = self.agents, self.agents.rows(handles)
        a["cmd_lin"][rows] = linear
        a["cmd_ang"][rows] = angular
        a["cmd_until"][rows] = until
        a["state"][rows] = int(DriveState.VELOCITY)
        a["arrived"][rows] = False

    def stop(self, handle: int) -> None:
        """Stop at once: no goal, path or command; velocities zero."""
        self._paths.pop(handle, None)
        a, row = self.agents, self.agents.row(handle)
        a["state"][row] = int(DriveState.IDLE)
        a["vel"][row] = 0.0
        a["yaw_rate"][row] = 0.0

    def _target(
        self,
        row: int | IntArray,
        position: np.ndarray,
        yaw: float,
        align: bool,
        tolerance: float,
        final: bool,
        leg: tuple[float, np.ndarray, float] = (np.inf, np.zeros(3), np.inf),
    ) -> None:
        a = self.agents.views()
        a["leg_v"][row], a["next_dir"][row], a["next_v"][row] = leg
        a["goal"][row] = position
        a["goal_yaw"][row] = yaw
        a["align"][row] = align
        a["tolerance"][row] = tolerance
        a["final"][row] = final
        a["arrived"][row] = False
        a["state"][row] = int(DriveState.GOAL)

    def _load_waypoint(self, handle: int, path: _Path) -> None:
        k = path.index
        final = k == len(path.positions) - 1
        next_dir, next_v = np.zeros(3), np.inf
        if not final:
            delta = path.positions[k + 1] - path.positions[k]
            length = float(np.linalg.norm(delta))
            next_dir = delta / length if length > 0 else next_dir
            next_v = float(path.speed_limits[k + 1])
        self._target(
            self.agents.row(handle),
            path.positions[k],
            float(path.yaws[k]),
            (path.align and final) or (path.face is not None and bool(path.face[k])),
            path.tolerance if final else 0.0,
            final,
            (float(path.speed_limits[k]), next_dir, next_v),
        )

    # -- the step -----------------------------------------------------------------------------

    def step(self, dt: float, now: float, only: IntArray | None = None) -> IntArray:
        """Advance all moving agents (or the `only` agent handles) by `dt`.

        Returns the handles of agents that arrived at their final goal in this step.
        """
        a = self.agents.views()  # (column reads without calls)
        rows = (a["state"] != int(DriveState.IDLE)).nonzero()[0]
        if only is not None:
            rows = np.intersect1d(rows, self.agents.rows(only))
        if rows.size == 0:
            return np.empty(0, dtype=np.int64)
        brows = self.bodies.rows(a["body"][rows])
        arrived, rows, brows = self._drive_compiled(rows, brows, dt, now)
        if rows.size == 0:
            return arrived
        return np.concatenate((arrived, self._drive_rows(rows, brows, dt, now)))

    def _drive_compiled(
        self, rows: IntArray, brows: IntArray, dt: float, now: float
    ) -> tuple[IntArray, IntArray, IntArray]:
        """The rows the compiled kernels take, driven in place on the tables: omnidirectional
        robots driving to a goal without turning (`_drive_straight`), and differential-drive
        ones driving to a goal (`_drive_differential`). Returns (the handles that arrived, the
        rows and body rows left for the NumPy controllers: all of them without Numba)."""
        a, b = self.agents, self.bodies
        none = np.empty(0, dtype=np.int64)
        columns = (
            b["pos"],
            b["quat"],
            a["vel"],
            a["goal"],
            a["goal_yaw"],
            a["yaw_rate"],
            *(a[name] for name in LIMITS),
        )
        if not kernels.usable(rows.size) or not all(
            x.dtype == np.float64 and x.flags.c_contiguous for x in columns
        ):  # (the tables' columns always are: the kernels write them in place)
            return none, rows, brows
        state, mode = _of(a["state"], rows), _of(a["mode"], rows)
        goal = state == int(DriveState.GOAL)
        straight = goal & (mode == int(MotionMode.OMNIDIRECTIONAL))
        turning = goal & (mode == int(MotionMode.DIFFERENTIAL))
        if not any_set(straight) and not any_set(turning):
            return none, rows, brows
        arrived = [none]
        for take, drive in ((straight, self._drive_straight), (turning, self._drive_differential)):
            if not any_set(take):
                continue
            r, br = (rows, brows) if all_set(take) else (rows[take], brows[take])
            dist_left, yaw_left = drive(r, br, dt)  # (all drive to a goal: no velocity rows)
            arrived.append(self._transitions(r, None, now, dist_left, yaw_left))
        rest = ~(straight | turning)
        return np.concatenate(arrived), rows[rest], brows[rest]

    def _drive_rows(self, rows: IntArray, brows: IntArray, dt: float, now: float) -> IntArray:
        """The NumPy controllers for `rows` (body rows `brows`): one vectorised call per motion
        mode driving to a goal, and one for velocity commands."""
        a, b = self.agents.views(), self.bodies.views()
        before = Motion(
            rows_of(b["pos"], brows),
            quat.yaw_of(rows_of(b["quat"], brows)),
            rows_of(a["vel"], rows),
            a["yaw_rate"][rows],
        )
        scale = a["speed_scale"][rows]
        max_v = np.minimum(a["max_v"][rows] * scale, a["leg_v"][rows])
        limits = (max_v, a["max_a"][rows], a["max_w"][rows] * scale, a["max_alpha"][rows])
        passing = self._pass_speeds(rows, before.pos, max_v, dt)
        state, mode = a["state"][rows], a["mode"][rows]

        def to_goal(controller: Controller) -> Runner:
            def run(r: IntArray, m: Motion, lim: Limits) -> tuple[Motion, np.ndarray, np.ndarray]:
                goal = rows_of(a["goal"], r)
                if controller in PASSING and passing is not None:
                    sel = rows.searchsorted(r)  # r is a sorted subset of rows
                    return controller(
                        m, goal, a["goal_yaw"][r], a["align"][r], lim, dt, passing[sel]
                    )
                return controller(m, goal, a["goal_yaw"][r], a["align"][r], lim, dt)

            return run

        def by_velocity(
            r: IntArray, m: Motion, lim: Limits
        ) -> tuple[Motion, np.ndarray, np.ndarray]:
            differential = a["mode"][r] == int(MotionMode.DIFFERENTIAL)
            out = step_velocity(
                m, a["cmd_lin"][r], a["cmd_ang"][r], now < a["cmd_until"][r], differential, lim, dt
            )
            return out, np.zeros(r.size), np.zeros(r.size)

        goal_rows = state == int(DriveState.GOAL)
        if all_set(goal_rows) and all_set(mode == mode[0]):  # the usual fleet: one kind, no subsets
            after, dist_left, yaw_left = to_goal(_controller(int(mode[0])))(rows, before, limits)
            return self._write_back(rows, brows, state, now, before, after, dist_left, yaw_left)
        groups = [  # each motion mode driving to a goal, and velocity commands
            (np.flatnonzero(goal_rows & (mode == kind)), to_goal(_controller(kind)))
            for kind in np.unique(mode[goal_rows]).tolist()
        ]
        groups.append((np.flatnonzero(state == int(DriveState.VELOCITY)), by_velocity))
        groups = [(sel, run) for sel, run in groups if sel.size]
        if len(groups) == 1:  # one kind for every row, no subset copies
            after, dist_left, yaw_left = groups[0][1](rows, before, limits)
        else:
            after = Motion(
                before.pos.copy(), before.yaw.copy(), before.vel.copy(), before.yaw_rate.copy()
            )
            dist_left, yaw_left = np.zeros(rows.size), np.zeros(rows.size)
            for sel, run in groups:
                out, dist_left[sel], yaw_left[sel] = run(
                    rows[sel], _subset(before, sel), _limits(limits, sel)
                )
                _assign(after, sel, out)
        return self._write_back(rows, brows, state, now, before, after, dist_left, yaw_left)

    def _write_back(
        self,
        rows: IntArray,
        brows: IntArray,
        state: np.ndarray,
        now: float,
        before: Motion,
        after: Motion,
        dist_left: np.ndarray,
        yaw_left: np.ndarray,
    ) -> IntArray:
        """The step's motion into the tables; then arrivals and waypoints (`_transitions`)."""
        a, b = self.agents.views(), self.bodies.views()
        b["pos"][brows] = after.pos
        if after.yaw is not before.yaw:  # a controller that turned no robot hands yaw back as is
            b["quat"][brows] = quat.from_yaw(after.yaw)
        b["moved"][brows] = True
        b["dirty"][brows] = True
        a["vel"][rows] = after.vel
        a["yaw_rate"][rows] = after.yaw_rate
        return self._transitions(rows, state, now, dist_left, yaw_left, after.vel, after.yaw_rate)

    def _drive_straight(
        self, rows: IntArray, brows: IntArray, dt: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Omnidirectional rows driving to a goal (or through a path's waypoint), compiled and
        in place on the tables, those turning towards their goal's yaw meanwhile turned
        compiled too, picked in the drive's own pass (`omni_turn.drive`: the turn three to six
        times faster than NumPy's from 256 rows, and the skipped rows cost next to nothing).
        Returns (distance left, yaw left). The numbers are the NumPy path's (`step_omni`)."""
        a, b = self.agents, self.bodies
        passing = None
        if self._paths:  # the speeds kept through waypoints, from the limits worked out here
            scale = _of(a["speed_scale"], rows)
            max_v = np.minimum(_of(a["max_v"], rows) * scale, _of(a["leg_v"], rows))
            passing = self._pass_speeds(rows, rows_of(b["pos"], brows), max_v, dt)
        dist_left, yaw_left = omni_turn.drive(rows, brows, a, b, dt, self._turns, passing)
        self._mark_moved(brows)
        return dist_left, yaw_left

    def _drive_differential(
        self, rows: IntArray, brows: IntArray, dt: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Differential-drive rows driving to goals, compiled and in place on the tables
        (`differential_kernel`, which reads the limits from the agent table): (distance left,
        yaw left)."""
        a, b = self.agents, self.bodies
        passing = None
        if self._paths:
            max_v = np.minimum(
                _of(a["max_v"], rows) * _of(a["speed_scale"], rows), _of(a["leg_v"], rows)
            )
            passing = self._pass_speeds(rows, rows_of(b["pos"], brows), max_v, dt)
        out = differential_drive(rows, brows, a.views(), b.views(), dt, passing)
        self._mark_moved(brows)
        return out

    def _mark_moved(self, brows: IntArray) -> None:
        """Mark the body rows moved (pose sync, boxes): all of them at once when they are
        every row."""
        b = self.bodies
        if brows.size == len(b):  # (distinct rows, as many as there are: every row)
            b["moved"][:] = True
            b["dirty"][:] = True
        else:
            b["moved"][brows] = True
            b["dirty"][brows] = True

    def _pass_speeds(
        self, rows: IntArray, pos: np.ndarray, max_v: np.ndarray, dt: float
    ) -> np.ndarray | None:
        """Speed (N,) each row may have on reaching its goal: 0 unless it is an intermediate
        path waypoint; None when no row has one (the usual fleet: no work)."""
        if not self._paths:  # nobody follows a path: nothing to pass through
            return None
        if kernels.usable(rows.size):
            return kernels.pass_speeds(rows, pos, max_v, self.agents.views(), dt)
        a = self.agents.views()
        next_dir = rows_of(a["next_dir"], rows)
        through = (next_dir != 0.0).any(axis=1) & (a["state"][rows] == int(DriveState.GOAL))
        if not any_set(through):
            return None
        goal = rows_of(a["goal"], rows)
        delta = goal - pos
        dist = np.maximum(row_norm(delta), 1e-300)
        # (np.minimum/np.maximum: np.clip's wrapping costs more than the clipping here)
        cos = np.minimum(np.maximum(np.einsum("ij,ij->i", delta, next_dir) / dist, -1.0), 1.0)
        half_sin = np.sqrt((1.0 - cos) / 2.0)  # sin of half the turn
        # Omnidirectional: the velocity turns in one step, changing by 2 v sin(turn / 2) <= a dt.
        corner = a["max_a"][rows] * dt / np.maximum(2.0 * half_sin, 1e-300)
        straight = cos >= 1.0 - 1e-12
        corner = np.where(
            a["mode"][rows] == int(MotionMode.DIFFERENTIAL), np.where(straight, np.inf, 0.0), corner
        )
        speed = np.minimum(np.minimum(max_v, a["next_v"][rows]), corner)
        # A turn too sharp to take faster than one step's speed change is taken from rest: the
        # last braking step is slower than that, and the turn then needs no more than a * dt.
        gentle = speed >= a["max_a"][rows] * dt
        result: np.ndarray = np.where(through & gentle, speed, 0.0)
        return result

    def _transitions(
        self,
        rows: IntArray,
        state: np.ndarray | None,
        now: float,
        dist_left: np.ndarray,
        yaw_left: np.ndarray,
        vel: np.ndarray | None = None,
        yaw_rate: np.ndarray | None = None,
    ) -> IntArray:
        """Arrivals, settling, expired velocity commands and the next waypoint of a path, for
        the agent `rows` after their step (`state` per row; None: all drive to a goal; `vel`,
        `yaw_rate` per row, None: as the table has them). Only the rows on (or within
        tolerance of) their goal, or following a velocity command, can change: the usual step
        has few or none, and the rest is done on those alone."""
        a = self.agents.views()
        near = dist_left <= np.maximum(_of(a["tolerance"], rows), SETTLE_EPS)
        if state is not None:
            near |= state == int(DriveState.VELOCITY)
        if not any_set(near):
            return np.empty(0, dtype=np.int64)
        pick = near.nonzero()[0]
        r, dist_left, yaw_left = rows[pick], dist_left[pick], yaw_left[pick]
        state = a["state"][r] if state is None else state[pick]
        vel = rows_of(a["vel"], r) if vel is None else vel[pick]
        yaw_rate = a["yaw_rate"][r] if yaw_rate is None else yaw_rate[pick]
        # Yaw round-trips through a quaternion each step, so "exactly there" means within ulps.
        at_rest = (row_norm(vel) <= SETTLE_EPS) & (np.abs(yaw_rate) <= SETTLE_EPS)
        goal = state == int(DriveState.GOAL)
        final = a["final"][r]
        settled = goal & final & (dist_left <= SETTLE_EPS) & (yaw_left <= SETTLE_EPS) & at_rest
        within = (dist_left <= a["tolerance"][r]) & (yaw_left <= ANGLE_TOLERANCE_RAD)
        # A robot at rest on its goal has arrived, whatever its tolerance (even 0 m).
        arrived = goal & final & ~a["arrived"][r] & (within | settled)
        a["arrived"][r[arrived]] = True
        expired = (state == int(DriveState.VELOCITY)) & (now >= a["cmd_until"][r]) & at_rest
        done = r[settled | expired]
        a["state"][done] = int(DriveState.IDLE)
        a["vel"][done] = 0.0
        a["yaw_rate"][done] = 0.0
        handles = self.agents.handles
        for row in r[goal & ~final & (dist_left <= SETTLE_EPS)]:  # waypoint: load the next
            handle = int(handles[row])
            path = self._paths[handle]
            path.index += 1
            self._load_waypoint(handle, path)
        arrived_handles: IntArray = handles[r[arrived]].copy()
        return arrived_handles

    # -- readback -----------------------------------------------------------------------------

    def is_arrived(self, handle: int) -> bool:
        """Whether the agent has reached its goal."""
        return bool(self.agents["arrived"][self.agents.row(handle)])

    def arrived(self, handles: IntArray) -> np.ndarray:
        """`is_arrived` for many agents at once (bool, in the order of `handles`)."""
        return np.array(self.agents["arrived"][self.agents.rows(handles)], dtype=bool)

    def is_moving(self, handle: int) -> bool:
        """Whether the agent is driving."""
        return bool(self.agents["state"][self.agents.row(handle)] != int(DriveState.IDLE))

    def moving_count(self, handles: IntArray | None = None) -> int:
        """How many of `handles` (default: all agents) are driving."""
        state = (
            self.agents["state"]
            if handles is None
            else self.agents["state"][self.agents.rows(handles)]
        )
        return int(np.count_nonzero(state != int(DriveState.IDLE)))


def _controller(mode: int) -> Controller:
    """The controller that drives motion mode `mode` to a goal."""
    if mode == int(MotionMode.OMNIDIRECTIONAL):
        return step_omni
    if mode == int(MotionMode.DIFFERENTIAL):
        return step_differential
    return motion_model(mode)


def _subset(m: Motion, sel: IntArray) -> Motion:
    return Motion(m.pos[sel], m.yaw[sel], m.vel[sel], m.yaw_rate[sel])


def _assign(m: Motion, sel: IntArray, out: Motion) -> None:
    m.pos[sel], m.yaw[sel], m.vel[sel], m.yaw_rate[sel] = out.pos, out.yaw, out.vel, out.yaw_rate


def _limits(
    limits: tuple[np.ndarray, ...], sel: IntArray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    max_v, max_a, max_w, max_alpha = (x[sel] for x in limits)
    return max_v, max_a, max_w, max_alpha
