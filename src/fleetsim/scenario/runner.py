"""Running a built scenario: plugin hooks on every step, pacing, shutdown, and a summary."""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fleetsim.core import MultiRobotSimulationCore
from fleetsim.scenario.builder import ScenarioRun
from fleetsim.scenario.plugins import Plugin, call_hook, shut_down

PROGRESS_EVERY_S = 0.2  # wall seconds between progress reports


class StopSignal(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP) turned into a clean stop, like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class RunSummary:
    """What a run did. `wall_time` counts building too (`build_time` of it)."""

    sim_time: float
    wall_time: float
    steps: int
    robots: int
    actions_completed: int
    actions_failed: int
    collisions: int
    stopped_by: str | None = None  # "SIGINT" (Ctrl-C), "SIGTERM", "SIGHUP", or None
    build_time: float = 0.0
    collisions_by_kind: dict[str, int] = field(default_factory=dict)
    failure_reasons: dict[str, int] = field(default_factory=dict)
    failure_robots: dict[str, list[str]] = field(default_factory=dict)  # examples per reason
    kpis: dict[str, Any] = field(default_factory=dict)  # from plugins with kpis() (fleets)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # robots, tasks

    @property
    def interrupted(self) -> bool:
        """Whether a signal stopped the run."""
        return self.stopped_by is not None

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall second of stepping (building excluded)."""
        stepping = self.wall_time - self.build_time
        return self.sim_time / stepping if stepping > 0 else float("inf")


def run_scenario(
    run: ScenarioRun,
    duration: float | None = None,
    progress: Callable[[float, float], None] | None = None,
    build_time: float = 0.0,
) -> RunSummary:
    """Run for `duration` simulated seconds (default: the scenario's; None = until Ctrl-C).

    `progress(sim_time, real_time_factor)` is called a few times a second. Ctrl-C (or a
    `StopSignal`) stops the run cleanly. Every plugin's `on_shutdown` runs at the end, even
    after an error. `build_time` (wall seconds spent building) is added to the summary's wall
    time.
    """
    sim, plugins = run.sim, run.plugins
    # Per-step hooks go only to plugins that override them: 10,000 robots with a plugin that
    # reacts to arrivals must not cost 20,000 empty calls per step.
    pre, post = overriding(plugins, "pre_physics_step"), overriding(plugins, "on_physics_step")
    render = overriding(plugins, "on_render")
    if pre:
        sim.on("pre_step", lambda s, dt: call_hook(pre, "pre_physics_step", dt))
    if post or render:
        sim.on("post_step", _AfterStep(post, render, run.render_dt))
    start_wall, start_sim = time.perf_counter(), sim.sim_time
    last_report = [start_wall]

    def report(s: object, dt: float) -> None:
        now = time.perf_counter()
        if progress is not None and now - last_report[0] >= PROGRESS_EVERY_S:
            last_report[0] = now
            progress(sim.sim_time, (sim.sim_time - start_sim) / max(now - start_wall, 1e-9))

    sim.on("post_step", report)
    stopped_by = None
    try:
        sim.run_simulation(duration)
    except KeyboardInterrupt as exc:
        stopped_by = "SIGINT" if not isinstance(exc, StopSignal) else str(exc)
    finally:
        failures = shut_down(plugins)
    if failures:
        raise failures[0]
    wall = time.perf_counter() - start_wall
    return RunSummary(
        sim_time=sim.sim_time - start_sim,
        wall_time=wall + build_time,
        steps=sim.step_count,
        robots=len(run.scene.robots),
        actions_completed=sim.actions.completed_count,
        actions_failed=sim.actions.failed_count,
        collisions=sim.collision_count,
        stopped_by=stopped_by,
        build_time=build_time,
        collisions_by_kind=sim.collision_counts,
        failure_reasons=dict(sim.actions.failure_reasons.most_common()),
        failure_robots={k: list(v) for k, v in sim.actions.failure_robots.items()},
        kpis=_collect(plugins, "kpis"),
        tables=_collect(plugins, "tables"),
    )


def _collect(plugins: list[Plugin], method: str) -> dict[str, Any]:
    """What plugins that keep results (the fleet manager's `kpis`, `tables`) report."""
    out: dict[str, Any] = {}
    for plugin in plugins:
        report = getattr(plugin, method, None)
        if callable(report):
            out.update(report())
    return out


class _AfterStep:
    """After each physics step (seed 003): `on_physics_step(dt)`, then `on_render()` when
    `render_dt` of simulated time has passed since the last render (the first step renders)."""

    def __init__(self, post: list[Plugin], render: list[Plugin], render_dt: float) -> None:
        self.post, self.render, self.render_dt = post, render, render_dt
        self.last_render = -math.inf

    def __call__(self, sim: MultiRobotSimulationCore, dt: float) -> None:
        if self.post:
            call_hook(self.post, "on_physics_step", dt)
        if self.render and sim.sim_time - self.last_render >= self.render_dt - 1e-9:
            self.last_render = sim.sim_time
            call_hook(self.render, "on_render")


def overriding(plugins: list[Plugin], hook: str) -> list[Plugin]:
    """The plugins whose class overrides `hook` (the base class's hooks do nothing)."""
    base = getattr(Plugin, hook)
    return [p for p in plugins if getattr(type(p), hook) is not base]
