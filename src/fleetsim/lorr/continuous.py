"""Continuous mode: the entries' plans on fleetsim's robots.

The scheduler and planner are hosted as in kit mode (the same problem, cadence, environments,
task rules and seeded delays); what carries the plans out is a fleetsim simulation: one robot
a start (a model from the catalogue, `simple_cube` by default), on cells `cell_m` metres wide,
driving with its motion model's limits (a differential drive turns in place, accelerates and
brakes). fleetsim's executor stands in for the kit's:

- every planned move and turn is queued for its robot (waits are dropped), and each cell keeps
  the robots planned to enter it in the plan's order (the step they enter it, then robot index;
  later plans after earlier ones);
- a robot sets off for the next cell only when every robot before it in that cell's order has
  left it (reached the cell after), and turns whenever its queue says so. This keeps the
  plan's order of passing at every cell (an action-dependency graph, as in robust execution of
  MAPF plans): a robot that is late, delayed or slower than planned holds up only the robots
  planned to follow it, and never runs into one;
- a delayed robot starts nothing new until its delay is over.

fleetsim's robot faults (`faults`: a `FaultPlan`, as a scenario's `faults:` section makes one;
robots named `a0`, `a1`, ...) act on the robots as they drive: a stop or a breakdown holds a
robot where it is, a slowdown slows it; the robots planned after it wait their turn.

A tick is `seconds_a_tick` of simulated time, by default the time a robot at top speed takes to
cross a cell (`cell_m / max_linear_vel`: a kit robot crosses a cell a tick), simulated in steps
of at most `MAX_STEP_S`; so ticks, and tasks done in so many ticks, compare with kit mode's.

A robot is in a cell once it has arrived at its centre (the cell it left is then free). The
planner sees, as in the kit, the states its moves will end in (`curr_states`), the robots' own
(`system_states`) and what each has left to do (`staged_actions`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.agents import Agent, AgentSpawnParams
from fleetsim.core import MultiRobotSimulationCore, SimulationParams
from fleetsim.errors import ConfigError
from fleetsim.faults import FaultInjector, FaultPlan
from fleetsim.geometry import Pose
from fleetsim.lorr.kit import HEADING_YAW, STEP, Entries, KitRun, KitTiming
from fleetsim.lorr.mapf import Action, State
from fleetsim.lorr.problem import Problem

ROBOT_Z = 0.0
PASS_M = 0.02  # a cell is reached when the robot is this close to its centre, or past it
MAX_STEP_S = 0.1  # a tick is simulated in steps no longer than this


@dataclass(frozen=True)
class ContinuousSettings:
    """How the robots are made: `cell_m` metres a grid cell, the catalogue `model`, the
    `motion_mode` ("differential" turns in place, "omnidirectional" does not need to) and the
    motion limits (m/s, m/s^2, rad/s, rad/s^2)."""

    cell_m: float = 1.0
    model: str = "simple_cube"
    motion_mode: str = "differential"
    max_linear_vel: float = 1.5
    max_linear_accel: float = 1.0
    max_angular_vel: float = 2.0
    max_angular_accel: float = 4.0
    tick_s: float | None = None  # simulated seconds a tick (None: cell_m / max_linear_vel)

    def check(self) -> None:
        """Refuse settings no robot could drive with."""
        for name in (
            "cell_m",
            "max_linear_vel",
            "max_linear_accel",
            "max_angular_vel",
            "max_angular_accel",
        ):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"continuous mode: {name} must be a number > 0, not {value!r}")
        if self.tick_s is not None and not (math.isfinite(self.tick_s) and self.tick_s > 0):
            raise ConfigError(f"continuous mode: tick_s must be seconds > 0, not {self.tick_s!r}")

    @property
    def seconds_a_tick(self) -> float:
        """Simulated seconds a tick: as asked, else the time a robot at top speed takes to
        cross a cell (a kit robot crosses one a tick), so that ticks compare with kit mode's."""
        return self.tick_s if self.tick_s is not None else self.cell_m / self.max_linear_vel


class ContinuousRun(KitRun):
    """One continuous-mode run of `problem` (the executor entry is not used: fleetsim's
    executor keeps the plan's order of passing). Call `run()`, then `close()`."""

    def __init__(
        self,
        problem: Problem,
        entries: Entries,
        timing: KitTiming | None = None,
        settings: ContinuousSettings | None = None,
        file_storage_path: str = "",
        faults: FaultPlan | None = None,
    ) -> None:
        super().__init__(problem, entries, timing, file_storage_path)
        self.settings = settings or ContinuousSettings()
        self.settings.check()
        self.cell_m = self.settings.cell_m
        self.sim, self.agents = self._fleet()
        self.faults: FaultInjector | None = None
        if faults is not None and not faults.empty:
            try:  # robots named as the kit's output names them: a0, a1, ...
                self.faults = FaultInjector(self.sim, self.agents, faults).attach()
            except BaseException:
                self.sim.close()
                raise
        n = self.team
        self.end_location = self.location.copy()  # where each queue ends
        self.end_orientation = self.orientation.copy()
        self.visits: dict[int, deque[int]] = {}
        for robot, cell in enumerate(self.location.tolist()):
            self.visits.setdefault(cell, deque()).append(robot)
        self.segment = np.full(n, -1, dtype=np.int64)  # the action under way (-1: none)
        self.target = self.location.copy()
        self.target_orientation = self.orientation.copy()
        self.moves = np.array([1, problem.cols, -1, -problem.cols], dtype=np.int64)
        self.runs: list[list[int]] = [[] for _ in range(n)]  # cells of each run of moves left
        self.handles = self.sim.handles_of(self.agents)
        self.motion_handles = np.array([a.motion_handle for a in self.agents], dtype=np.int64)

    def _fleet(self) -> tuple[Any, list[Any]]:
        s = self.settings
        tick = s.seconds_a_tick
        self.substeps = max(1, math.ceil(tick / MAX_STEP_S - 1e-9))
        sim = MultiRobotSimulationCore(
            SimulationParams(timestep=tick / self.substeps, target_rtf=0, gui=False)
        )
        try:
            params = AgentSpawnParams(
                urdf_path=s.model,
                motion_mode=s.motion_mode,
                max_linear_vel=s.max_linear_vel,
                max_linear_accel=s.max_linear_accel,
                max_angular_vel=s.max_angular_vel,
                max_angular_accel=s.max_angular_accel,
            )
            xy = self._centres(self.location)
            positions = np.column_stack([xy, np.full(self.team, ROBOT_Z)])
            agents = Agent.from_params_at(params, positions, (0.0, 0.0, 0.0, 1.0), sim_core=sim)
            for robot, agent in enumerate(agents):
                agent.name = f"a{robot}"
        except BaseException:
            sim.close()
            raise
        return sim, agents

    def close(self) -> None:
        """Release the simulation."""
        self.sim.close()

    def __enter__(self) -> ContinuousRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def collisions(self) -> int:
        """Robot-robot collision episodes in the simulation."""
        return int(self.sim.collision_counts.get("robot-robot", 0))

    def _centres(self, cells: np.ndarray) -> np.ndarray:
        rows, cols = np.divmod(cells, self.cols)
        return np.column_stack([cols + 0.5, -(rows + 0.5)]) * self.cell_m

    # -- the executor ---------------------------------------------------------------------

    def _hand_over(self) -> None:
        """Queue the plan's moves and turns; each cell's order of entry; predict the ends."""
        entering = []
        plans = self.plan.actions
        for robot in range(self.team):
            queue = self.staged[robot]
            location, heading = int(self.end_location[robot]), int(self.end_orientation[robot])
            for step, action in enumerate(plans[robot] if robot < len(plans) else ()):
                if action == Action.FW:
                    location += int(self.moves[heading])
                    entering.append((step, robot, location))
                elif action == Action.CR:
                    heading = (heading + 1) % 4
                elif action == Action.CCR:
                    heading = (heading + 3) % 4
                else:
                    continue  # (W and NA: nothing to do)
                queue.append(action)
            self.end_location[robot], self.end_orientation[robot] = location, heading
        for _, robot, cell in sorted(entering):
            self.visits.setdefault(cell, deque()).append(robot)
        self.front[:] = [int(q[0]) if q else -1 for q in self.staged]
        ends = zip(self.end_location.tolist(), self.end_orientation.tolist(), strict=True)
        self.predicted = [State(loc, -1, ori) for loc, ori in ends]

    # -- one tick -------------------------------------------------------------------------

    def _move(self) -> None:
        self._draw_delays()
        before = (self.location.copy(), self.orientation.copy(), self.count.copy())
        started = self._dispatch()
        self.planned.record(
            np.where(started | (self.segment >= 0), self.segment, Action.W), *before
        )
        doing = self.segment.copy()
        for _ in range(self.substeps):  # (a tick of simulated time in steps of MAX_STEP_S)
            self.sim.step_once()
            self._arrivals()
        self.t += 1
        self.actual.record(np.where(doing >= 0, doing, Action.W).astype(np.int8), *before)

    def _dispatch(self) -> np.ndarray:
        """Start the next queued action of every idle robot whose turn it is: a turn, or the
        forward moves ahead whose cells are its turn to enter, driven through in one go."""
        started = np.zeros(self.team, dtype=bool)
        idle = (self.segment < 0) & (self.front >= 0) & ~self.in_delay
        for robot in np.flatnonzero(idle).tolist():
            action = int(self.front[robot])
            heading = int(self.orientation[robot])
            agent = self.agents[robot]
            if action == Action.FW:
                cells = self._cleared(robot)
                if not cells:
                    continue  # someone is to pass through the next cell first
                xy = self._centres(np.array(cells))
                yaw = float(HEADING_YAW[heading])
                if len(cells) == 1:
                    agent.set_goal(Pose.from_yaw(float(xy[0, 0]), float(xy[0, 1]), ROBOT_Z, yaw))
                else:
                    agent.set_waypoints(xy, np.full(len(cells), yaw), align_orientation=True)
                self.runs[robot] = cells
                self.target[robot] = cells[-1]
            else:
                heading = (heading + (1 if action == Action.CR else 3)) % 4
                x, y = self._centres(self.location[robot : robot + 1])[0]
                agent.set_goal(
                    Pose.from_yaw(float(x), float(y), ROBOT_Z, float(HEADING_YAW[heading]))
                )
                self.target[robot] = self.location[robot]
            self.segment[robot] = action
            self.target_orientation[robot] = heading
            started[robot] = True
        return started

    def _cleared(self, robot: int) -> list[int]:
        """The cells of the forward moves at the head of `robot`'s queue that are its turn to
        enter, in order (stopping at the first that is not, or at the first turn)."""
        cells: list[int] = []
        location, step = int(self.location[robot]), int(self.moves[self.orientation[robot]])
        for action in self.staged[robot]:
            if action != Action.FW:
                break
            location += step
            waiting = self.visits.get(location)
            if not waiting or waiting[0] != robot:
                break
            cells.append(location)
        return cells

    def _arrivals(self) -> None:
        """Robots that reached the next cell of their run (the cell behind is free again), or
        finished their turn; their queues move on. Only robots driving a run, or done with a
        turn, are looked at one by one."""
        active = self.segment >= 0
        if not active.any():
            return
        arrived = self.sim.world.motion.arrived(self.motion_handles)
        driving = active & (self.segment == Action.FW)
        turned = active & ~driving & arrived
        if driving.any():
            positions = np.asarray(self.sim.get_poses(self.handles)[0])[:, :2]
            for robot in np.flatnonzero(driving).tolist():
                self._passed(robot, positions[robot], bool(arrived[robot]))
                if not self.runs[robot]:
                    self.segment[robot] = -1
        self.orientation[turned] = self.target_orientation[turned]
        self.segment[turned] = -1
        for robot in np.flatnonzero(turned).tolist():
            self._pop(robot)

    def _passed(self, robot: int, position: np.ndarray, reached: bool) -> None:
        """The cells of `robot`'s run whose centre it has passed (the last: once there)."""
        cells = self.runs[robot]
        unit = STEP[self.orientation[robot]]
        while cells:
            centre = self._centres(np.array([cells[0]]))[0]
            ahead = float(np.dot(centre - position, unit))  # metres still to go to it
            last = len(cells) == 1
            if (last and not reached) or (not last and ahead > PASS_M):
                return
            left = self.visits[int(self.location[robot])]
            if left and left[0] == robot:
                left.popleft()
            self.location[robot] = cells.pop(0)
            self._pop(robot)

    def _pop(self, robot: int) -> None:
        queue = self.staged[robot]
        del queue[0]
        self.front[robot] = int(queue[0]) if queue else -1

    def frame_poses(self) -> tuple[np.ndarray, np.ndarray]:
        """The robots' positions (N, 2) in metres and yaws (N,) in the simulation."""
        positions, orientations = self.sim.get_poses(self.handles)
        x, y, z, w = orientations.T
        yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return np.asarray(positions)[:, :2].copy(), yaw

    @property
    def errors(self) -> list[tuple[int, int, int, str]]:
        """None: there is no kit action model to refuse requests in continuous mode."""
        return []
