"""Kit mode: the LoRR start kit's competition loop (v3.1.0), hosting a planner, a task
scheduler and an executor written for the kit.

One run, as the kit runs it:

- **Start.** Every robot faces east with counter 0; tasks are revealed to fill the pool. The
  scheduler and planner share one environment, the executor has its own. `initialize` is
  called on the scheduler, the planner, then the executor.
- **Initial plan** at tick 0: `scheduler.plan`, the goals set from its proposal, then
  `planner.plan` (`Entry.compute`).
- **Each tick**, at an adoption point (every K = ceil(plan_ms / tick_ms) ticks with prompt
  entries, from tick 0): the last proposal is checked and applied, the executor's
  `process_new_plan` appends the last plan to the staged actions and returns the states it
  predicts, and a new plan is launched on that snapshot (so a plan is staged one period after
  it was asked for). Then `next_command` says GO or STOP per robot, the delays of the tick are
  drawn, each robot requests its staged front (GO) or W (STOP, empty queue or delayed), the
  action model moves them, fronts are popped when done, and errands are checked.
- **Time.** `deterministic=True` (the default) treats every entry as prompt, so runs repeat
  exactly; `deterministic=False` measures wall time as the kit does: a late planner holds the
  plan, an executor over its budget costs all-wait ticks.

What fleetsim adds: an entry that raises, answers in the wrong shape or breaks the staged-queue
rule stops the run with an `EntryError` naming the entry, the call and the tick (the kit
crashes or aborts).
"""

from __future__ import annotations

import contextlib
import gc
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, EntryError, EntryTimeoutError
from fleetsim.faults.delays import DelayGenerator
from fleetsim.lorr import answers, model_kernel
from fleetsim.lorr.action_model import SYMBOL, ActionModel, ArrayTick, Pose, step_arrays
from fleetsim.lorr.mapf import (
    Action,
    ExecutionCommand,
    Plan,
    SharedEnvironment,
    State,
    Task,
    hosting,
)
from fleetsim.lorr.paths import PathRecorder
from fleetsim.lorr.problem import Problem
from fleetsim.lorr.tasks import TaskManager
from fleetsim.lorr.views import QueueCopies, StateCopies, StateView


@dataclass(frozen=True)
class KitTiming:
    """The kit's options: `ticks` (-s), `plan_ms` (-t, the plan period), `tick_ms` (-a, one
    tick's budget), `initial_ms` (-n, the first plan), `process_ms` (-x, `process_new_plan`),
    `preprocess_ms` (-p, `initialize`); `deterministic`: every entry counts as prompt."""

    ticks: int = 5000
    plan_ms: int = 1000
    tick_ms: int = 100
    initial_ms: int = 1000
    process_ms: int = 100
    preprocess_ms: int = 30000
    deterministic: bool = True

    def check(self) -> None:
        """Refuse options the kit could not run."""
        for name in ("ticks", "plan_ms", "tick_ms", "initial_ms", "process_ms", "preprocess_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a positive whole number, not {value!r}")

    @property
    def period(self) -> int:
        """Ticks between plan adoptions with prompt entries (K)."""
        return math.ceil(self.plan_ms / self.tick_ms)


@dataclass
class Entries:
    """The three entries of a run and the names errors give them (their files)."""

    planner: Any
    scheduler: Any
    executor: Any
    names: dict[str, str] = field(default_factory=dict)

    def name(self, kind: str) -> str:
        """How errors name the entry of `kind`."""
        return self.names.get(kind, kind)


class _Compute:
    """`Entry.compute` (scheduler, goals, planner), run at once (deterministic) or on a thread
    (wall time), as the kit runs it."""

    def __init__(self, run: KitRun, limit_ms: int, threaded: bool) -> None:
        self.run, self.limit_ms = run, limit_ms
        self.error: BaseException | None = None
        self.result: tuple[list[int], Plan] | None = None
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        if threaded:
            self.thread = threading.Thread(target=self._body, daemon=True, name="lorr-plan")
            self.thread.start()
        else:
            self._body()

    def _body(self) -> None:
        try:
            self.result = self.run.compute(self.limit_ms)
        except BaseException as exc:  # handed to the loop's thread
            self.error = exc
        finally:
            self.done.set()

    def wait_until(self, deadline: float) -> bool:
        """Whether the plan is in by `deadline` (time.monotonic())."""
        ready = self.done.wait(max(0.0, deadline - time.monotonic()))
        if ready and self.error is not None:
            raise self.error
        return ready


class KitRun:
    """One kit-mode run of `problem` with `entries` (call `run()`)."""

    def __init__(
        self,
        problem: Problem,
        entries: Entries,
        timing: KitTiming | None = None,
        file_storage_path: str = "",
    ) -> None:
        self.problem, self.entries = problem, entries
        self.timing = timing or KitTiming()
        self.timing.check()
        n = self.team = problem.team_size
        self.cols = problem.cols
        self.model = ActionModel(
            problem.blocked, problem.rows, problem.cols, problem.agent_counter, problem.agent_size
        )
        self.location = np.asarray(problem.starts, dtype=np.int64).copy()
        self.orientation = np.zeros(n, dtype=np.int64)  # all face east
        self.count = np.zeros(n, dtype=np.int64)
        self.moving = np.zeros(n, dtype=bool)  # part-way along an edge
        self.doing = np.full(n, int(Action.W), dtype=np.int64)  # the action under way
        self.in_delay = np.zeros(n, dtype=bool)
        self.t = 0
        self.staged: list[list[Action]] = [[] for _ in range(n)]
        self.front = np.full(n, -1, dtype=np.int64)  # each queue's first action, -1 if empty
        self.predicted: list[State] = list(self._system_states())
        self.tasks = TaskManager(problem.tasks, n, problem.reveal)
        self.delays = DelayGenerator(problem.delays, n) if problem.delays.p > 0 else None
        self.schedule: list[int] = [-1] * n
        self.plan = Plan([])
        self.pool: dict[int, Task] = {}  # the task pool the planner's environment holds
        self.planned, self.actual = PathRecorder(n), PathRecorder(n)
        self._last: tuple[int, np.ndarray, Any, Any] | None = None
        self.action_errors = 0
        self.env = self._environment(file_storage_path)
        self.exec_env = self._environment(file_storage_path)
        self.adoptions = 0
        self.entry_seconds = {
            "initialize": 0.0,
            "scheduler.plan": 0.0,
            "planner.plan": 0.0,
            "process_new_plan": 0.0,
            "next_command": 0.0,
        }
        self.loop_seconds = 0.0  # the run's wall time but the entries' calls on its thread
        self.warmup_seconds = 0.0  # loading the compiled kernels, before the run
        self._thread = threading.get_ident()
        self._initializing = "scheduler"  # the entry whose initialize runs (for a timeout)
        self._planning = "scheduler"  # the entry whose plan runs (for a first plan never in)
        self._entries_here = 0.0

    # -- the run --------------------------------------------------------------------------

    def run(
        self,
        progress: Callable[[int], None] | None = None,
        after_tick: Callable[[KitRun], None] | None = None,
    ) -> KitRun:
        """Run every tick; `progress(tick)` and `after_tick(self)` (a recorder) after each.
        Returns self (read the results)."""
        timing = self.timing
        began_run = time.perf_counter()
        model_kernel.warm()  # (loading compiled code: once a process, not a tick's work)
        self.warmup_seconds = time.perf_counter() - began_run
        began_run = time.perf_counter()
        with hosting(), _frozen():
            self._initialize()
            started = self._initial_plan()
            gc.freeze()  # (the problem, tasks and queues: long-lived, not rescanned each tick)
            remain = 0
            plan_start = time.monotonic()
            while self.t < timing.ticks:
                if remain <= 0 and started is not None:
                    deadline = plan_start + (timing.plan_ms - remain) / 1000
                    if started.wait_until(deadline):
                        self._take(started)
                        started = None
                if started is None and remain <= 0:
                    self._adopt()
                    started = self._launch(timing.plan_ms)
                    plan_start = time.monotonic()
                    remain = timing.plan_ms
                    if self.timing.deterministic and started.wait_until(0.0):
                        self._take(started)  # prompt: its proposal is the one ticks edit
                        started = None
                began = time.perf_counter()
                self._move()
                moved_ms = (time.perf_counter() - began) * 1000
                ticks = 1 if timing.deterministic else max(1, math.ceil(moved_ms / timing.tick_ms))
                remain -= ticks * timing.tick_ms
                self.tasks.update(self.location, self.schedule, self.t)
                if after_tick is not None:
                    after_tick(self)
                if progress is not None:
                    progress(self.t)
            if started is not None and started.thread is not None:
                started.thread.join(timeout=0)  # a late planner is left behind, as the kit does
        self.loop_seconds = time.perf_counter() - began_run - self._entries_here
        return self

    # -- start ----------------------------------------------------------------------------

    def _environment(self, storage: str) -> SharedEnvironment:
        p = self.problem
        return SharedEnvironment(
            num_of_agents=self.team,
            rows=p.rows,
            cols=p.cols,
            map_name=p.map_name,
            map=[int(v) for v in p.blocked],
            file_storage_path=storage,
            min_planner_communication_time=self.timing.plan_ms,
            action_time=self.timing.tick_ms,
            max_counter=p.agent_counter,
        )

    def _initialize(self) -> None:
        limit = self.timing.preprocess_ms
        self._bind()
        if self.timing.deterministic:
            self._initialize_entries()
        else:  # the kit stops an initialize still running at its limit: so do we
            done, failed, began = threading.Event(), [], time.monotonic()

            def body() -> None:
                try:
                    self._initialize_entries()
                except BaseException as exc:  # handed to the loop's thread
                    failed.append(exc)
                finally:
                    done.set()

            threading.Thread(target=body, daemon=True, name="lorr-initialize").start()
            if not done.wait(limit / 1000):
                kind = self._initializing
                late = time.monotonic() - began
                raise EntryTimeoutError(
                    f"{self.entries.name(kind)}: initialize still running after {late:.1f} s, "
                    f"past the preprocessing limit of {limit} ms (-p): the kit stops the run "
                    "here and exits with code 124"
                )
            if failed:
                raise failed[0]
        spent = self.entry_seconds["initialize"] * 1000
        if not self.timing.deterministic and spent > limit:
            raise EntryError(
                f"initialize took {spent:.0f} ms, over the preprocessing limit of "
                f"{limit} ms (-p; the kit exits with code 124)"
            )
        self.tasks.reveal(self.t)
        self._sync_planner()
        self._sync_executor()
        self.env.new_freeagents = list(range(self.team))
        self.exec_env.new_freeagents = list(range(self.team))

    def _initialize_entries(self) -> None:
        e, limit = self.entries, self.timing.preprocess_ms
        for kind, entry in (
            ("scheduler", e.scheduler),
            ("planner", e.planner),
            ("executor", e.executor),
        ):
            self._initializing = kind
            self._call(kind, "initialize", entry.initialize, limit)

    def _bind(self) -> None:
        e = self.entries
        for entry in (e.scheduler, e.planner):
            entry.env = self.env
        e.executor.env = self.exec_env

    def _initial_plan(self) -> _Compute | None:
        """The first plan; a late one makes everyone wait (ticks unrecorded, no delays drawn)
        until it is in. Returns the plan still running (never, as the kit waits for it)."""
        pending = self._launch(self.timing.initial_ms)
        ready = pending.wait_until(time.monotonic() + self.timing.initial_ms / 1000)
        while not ready and self.t < self.timing.ticks:
            self.t += 1
            ready = pending.wait_until(time.monotonic() + self.timing.tick_ms / 1000)
        if not ready:  # the run's time is up before the first plan came in
            raise EntryError(
                f"{self.entries.name(self._planning)}: plan did not return the "
                f"first plan within the run's {self.timing.ticks} ticks: nothing "
                "moved"
            )
        self._take(pending)
        return None

    def _launch(self, limit_ms: int) -> _Compute:
        compute = _Compute(self, limit_ms, threaded=not self.timing.deterministic)
        self.tasks.clear_new()
        return compute

    def _take(self, compute: _Compute) -> None:
        assert compute.result is not None
        self.schedule, self.plan = compute.result

    # -- the entries ----------------------------------------------------------------------

    def compute(self, limit_ms: int) -> tuple[list[int], Plan]:
        """`Entry.compute`: the scheduler's proposal, the goals, the planner's plan."""
        self._planning = "scheduler"
        raw = self._call("scheduler", "plan", self.entries.scheduler.plan, limit_ms)
        schedule = answers.ints(
            raw, self._where("scheduler", "plan"), "a list of task ids, one a robot"
        )
        self.env.curr_task_schedule = list(schedule)
        goals: list[list[tuple[int, int]]] = []
        get = self.pool.get
        for robot, task_id in enumerate(schedule[: self.team]):
            if task_id == -1:
                goals.append([])
                continue
            task = get(task_id)
            if task is None or task.idx_next_loc >= len(task.locations):
                raise EntryError(
                    f"{self.entries.name('scheduler')}: plan at tick {self.t} "
                    f"gives robot {robot} task {task_id}, which is not in "
                    "env.task_pool (the kit crashes here)"
                )
            goals.append([(task.locations[task.idx_next_loc], task.t_revealed)])
        goals.extend([] for _ in range(self.team - len(goals)))
        self.env.goal_locations = goals  # type: ignore[assignment] # (pairs: read with pair_first)
        self._planning = "planner"
        raw = self._call("planner", "plan", self.entries.planner.plan, limit_ms)
        return schedule, Plan(answers.plan_actions(raw, self._where("planner", "plan")))

    def _where(self, kind: str, method: str) -> str:
        """How errors name an entry's answer: "its file: method at tick t"."""
        return f"{self.entries.name(kind)}: {method} at tick {self.t}"

    def _call(self, kind: str, method: str, fn: Callable[..., Any], *args: Any) -> Any:
        """An entry's call, timed (`entry_seconds`); its errors named."""
        began = time.perf_counter()
        try:
            return fn(*args)
        except EntryError:
            raise
        except SystemExit as exc:  # (the kit's process would end here: say so, not vanish)
            raise EntryError(
                f"{self.entries.name(kind)}: {method} called sys.exit({exc.code!r}) "
                f"at tick {self.t}"
            ) from None
        except Exception as exc:
            raise EntryError(
                f"{self.entries.name(kind)}: {method} raised at tick {self.t}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        finally:
            spent = time.perf_counter() - began
            key = method if method in self.entry_seconds else f"{kind}.{method}"
            self.entry_seconds[key] = self.entry_seconds.get(key, 0.0) + spent
            if threading.get_ident() == self._thread:
                self._entries_here += spent

    # -- adoption -------------------------------------------------------------------------

    def _adopt(self) -> None:
        """Apply the proposal, hand the plan to the executor, sync the planner."""
        self.adoptions += 1
        self.tasks.set_assignment(self.schedule)
        self._hand_over()
        self._sync_planner()

    def _hand_over(self) -> None:
        """The executor's `process_new_plan`: the plan staged, the states predicted."""
        self._sync_executor()
        before = [list(q) for q in self.staged]
        began = time.perf_counter()
        raw = self._call(
            "executor",
            "process_new_plan",
            self.entries.executor.process_new_plan,
            self.timing.process_ms,
            self.plan,
            self.staged,
        )
        spent = time.perf_counter() - began
        where = self._where("executor", "process_new_plan")
        answers.check_staged(self.staged, before, self.plan.actions, self.team, where)
        self.front[:] = [int(q[0]) if q else -1 for q in self.staged]
        states = answers.predicted_states(raw, self.team, where)
        # (read through copies; a planner on wall time reads while the executor runs on)
        self.predicted = states if self.timing.deterministic else [s.copy() for s in states]
        if not self.timing.deterministic:
            over = spent * 1000 - self.timing.tick_ms
            while over > 0:  # the kit's all-wait ticks: unrecorded, no delays drawn
                self.t += 1
                over -= self.timing.tick_ms

    # -- the environments -----------------------------------------------------------------

    def _system_states(self, snapshot: bool = True) -> StateView:
        loc, ori, cnt, delayed = self.location, self.orientation, self.count, self.in_delay
        if snapshot:
            loc, ori, cnt, delayed = loc.copy(), ori.copy(), cnt.copy(), delayed.copy()
        return StateView(loc, ori, cnt, delayed, self.t, self.problem.agent_counter)

    def _sync_simulator(self, env: SharedEnvironment, snapshot: bool) -> None:
        """The kit copies these every sync; fleetsim hands out views that copy on reading (a
        snapshot for the planner, which may read while the loop moves on)."""
        env.curr_states = StateCopies(self.predicted)  # type: ignore[assignment]
        env.system_states = self._system_states(snapshot)  # type: ignore[assignment]
        env.start_states = StateCopies(self.predicted)  # type: ignore[assignment]
        env.system_timestep = self.t
        env.staged_actions = QueueCopies(self.staged, snapshot)  # type: ignore[assignment]

    def _sync_planner(self) -> None:
        goals = self.env.goal_locations
        self.env.goal_locations = goals[: self.team] + [[] for _ in range(self.team - len(goals))]
        self.pool = self.tasks.sync(self.env, snapshot=not self.timing.deterministic)
        self._sync_simulator(self.env, snapshot=not self.timing.deterministic)

    def _sync_executor(self) -> None:
        self._sync_simulator(self.exec_env, snapshot=False)

    # -- one tick -------------------------------------------------------------------------

    def _move(self) -> None:
        self._sync_executor()
        began = time.perf_counter()
        raw = self._call(
            "executor", "next_command", self.entries.executor.next_command, self.timing.tick_ms
        )
        spent = time.perf_counter() - began
        commands = answers.commands(raw, self.team, self._where("executor", "next_command"))
        self._draw_delays()
        if not self.timing.deterministic:
            over = spent * 1000 - self.timing.tick_ms
            while over > 0:  # the kit's all-wait ticks for a late executor, recorded as T / W
                here = (self.location, self.orientation, self.count)
                self.planned.record(np.full(self.team, int(Action.NA), np.int8), *here)
                self.actual.record(np.full(self.team, int(Action.W), np.int8), *here)
                self.t += 1
                over -= self.timing.tick_ms
                self._draw_delays()
        go = (commands == ExecutionCommand.GO) & (self.front >= 0) & ~self.in_delay
        requests = np.where(go, self.front, int(Action.W))
        carry = (requests != Action.W) & (self.count > 0)
        requests[carry] = self.doing[carry]  # mid-action, any request but W carries it on
        before = (self.location, self.orientation, self.count)
        self.planned.record(requests, *before)
        executed = self._step(requests)
        self.t += 1
        self.actual.record(executed, *before)
        acted = executed != Action.W
        self.doing[acted] = np.where(self.count[acted] > 0, executed[acted], int(Action.W))
        changed = (self.location != before[0]) | (self.orientation != before[1])
        popped = (self.front >= 0) & (((self.front == Action.W) & ~acted) | changed)
        for robot in np.flatnonzero(popped).tolist():
            queue = self.staged[robot]
            del queue[0]
            self.front[robot] = int(queue[0]) if queue else -1

    def _step(self, requests: np.ndarray) -> np.ndarray:
        """The action model on every robot's request: the poses move on; the actions done."""
        arrays = (self.location, self.orientation, self.count, self.moving)
        tick = step_arrays(self.model, *arrays, requests)
        when = self.t + 1
        if tick is not None:
            self.location, self.orientation, self.count, self.moving = (
                tick.location,
                tick.orientation,
                tick.count,
                tick.moving,
            )
            reasons: ArrayTick | dict[int, str] = tick
            cycles: ArrayTick | list[tuple[int, int, str]] = tick
            executed = tick.actions
        else:  # without Numba: the model robot by robot
            poses = [
                Pose(int(a), int(b), int(c), bool(d)) for a, b, c, d in zip(*arrays, strict=True)
            ]
            done = self.model.step(poses, [Action(int(a)) for a in requests])
            self.location = np.array([p.location for p in done.poses], dtype=np.int64)
            self.orientation = np.array([p.orientation for p in done.poses], dtype=np.int64)
            self.count = np.array([p.count for p in done.poses], dtype=np.int64)
            self.moving = np.array([p.moving for p in done.poses], dtype=bool)
            reasons, cycles = done.reasons, done.cycles
            executed = np.array(done.actions, dtype=np.int64)
        self._last = (when, requests, cycles, reasons)
        return executed

    @property
    def errors(self) -> list[tuple[int, int, int, str]]:
        """The last tick's action errors, as the kit writes them: (robot, robot met again, tick,
        text) for each dependency cycle, then (robot, -1, tick, "Agent waits instead of ...")
        for each refused request, in robot order."""
        if self._last is None:
            return []
        when, requests, found, reasons = self._last
        cycles = found if isinstance(found, list) else found.cycles
        out = [(i, j, when, text) for i, j, text in cycles]
        made = reasons if isinstance(reasons, dict) else reasons.reasons
        for i in sorted(made):
            symbol = SYMBOL[Action(int(requests[i]))]
            out.append((i, -1, when, f"Agent waits instead of {symbol}: {made[i]}"))
        return out

    def _draw_delays(self) -> None:
        if self.delays is not None:
            self.delays.next_tick()
            self.in_delay = self.delays.remaining > 0

    # -- results --------------------------------------------------------------------------

    cell_m = 1.0  # metres a grid cell, for recordings

    def frame_poses(self) -> tuple[np.ndarray, np.ndarray]:
        """Every robot's position (N, 2) in metres (x along the columns, y up the rows, the
        map's first row on top) and yaw (N,), part-way moves and turns included."""
        share = self.count / max(1, self.problem.agent_counter)
        rows, cols = np.divmod(self.location, self.cols)
        xy = np.column_stack([cols + 0.5, -(rows + 0.5)])
        moving = self.moving & (self.count > 0)
        xy[moving] += STEP[self.orientation[moving]] * share[moving, None]
        yaw = HEADING_YAW[self.orientation].copy()
        turning = (self.count > 0) & ~self.moving
        right = turning & (self.doing == Action.CR)
        left = turning & (self.doing == Action.CCR)
        yaw[right] -= share[right] * math.pi / 2
        yaw[left] += share[left] * math.pi / 2
        return xy, yaw

    @property
    def finished(self) -> int:
        """Tasks finished."""
        return self.tasks.finished


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """Objects frozen inside (`gc.freeze`) are handed back to the collector at the end."""
    try:
        yield
    finally:
        gc.unfreeze()


HEADING_YAW = np.array([0.0, -math.pi / 2, math.pi, math.pi / 2])  # east, south, west, north
STEP = np.array([[1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, 1.0]])  # a heading's (dx, dy)


def run_kit(
    problem: Problem,
    entries: Entries,
    timing: KitTiming | None = None,
    progress: Callable[[int], None] | None = None,
) -> KitRun:
    """Run `problem` in kit mode with `entries` (loaded inside `mapf.hosting()`)."""
    return KitRun(problem, entries, timing).run(progress)
