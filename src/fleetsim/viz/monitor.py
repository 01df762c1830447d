"""`DataMonitor` (`monitor: true`): live figures of a running simulation.

Shown in a small tkinter window when there is a display, otherwise as a live panel in the
terminal (or not at all when output is not a terminal). It only reads the simulation: nothing is
written to disk.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rich.live import Live
from rich.table import Table

from fleetsim import environment

if TYPE_CHECKING:
    from fleetsim.core.simulation import MultiRobotSimulationCore


@dataclass(frozen=True)
class MonitorFigures:
    """What the monitor shows: times, real-time factors, step time, moving robots, collisions,
    paused."""

    sim_time: float  # s
    real_time: float  # wall s since the monitor started, pauses excluded
    target_rtf: float
    actual_rtf: float
    step_ms: float
    moving_robots: int
    collisions: int  # pairs touching now
    collision_episodes: int
    paused: bool

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows to show."""
        target = "max" if self.target_rtf <= 0 else f"{self.target_rtf:.2f}x"
        return [
            ("sim time", f"{self.sim_time:.2f} s"),
            ("real time", f"{self.real_time:.2f} s"),
            ("target RTF", target),
            ("actual RTF", f"{self.actual_rtf:.2f}x"),
            ("step time", f"{self.step_ms:.3f} ms"),
            ("moving robots", str(self.moving_robots)),
            ("collisions", f"{self.collisions} now, {self.collision_episodes} total"),
            ("state", "paused" if self.paused else "running"),
        ]


class View(Protocol):
    """Where the figures are shown."""

    def show(self, figures: MonitorFigures) -> None:
        """Show the latest figures."""

    def close(self) -> None:
        """Close the view."""


class DataMonitor:
    """Samples a simulation every `period_s` wall seconds after its steps."""

    def __init__(
        self, sim: MultiRobotSimulationCore, period_s: float = 0.25, view: str = "auto"
    ) -> None:
        self.sim = sim
        self.period_s = period_s
        self.view_kind = view
        self.view: View | None = None
        self.last: MonitorFigures | None = None
        self._start_wall = self._start_sim = self._last_show = 0.0
        self._paused_since: float | None = None
        self._paused_total = 0.0

    def start(self) -> DataMonitor:
        """Start sampling after each step; returns itself."""
        self._start_wall, self._start_sim = time.perf_counter(), self.sim.sim_time
        self.view = make_view(self.view_kind)
        events = self.sim.events
        events.on("post_step", self._tick)
        events.on("paused", self._on_pause)
        events.on("resumed", self._on_resume)
        return self

    def stop(self) -> None:
        """Stop sampling and close the view."""
        events = self.sim.events
        events.off("post_step", self._tick)
        events.off("paused", self._on_pause)
        events.off("resumed", self._on_resume)
        if self.view is not None:
            self.view.close()
            self.view = None

    def figures(self) -> MonitorFigures:
        """The figures now."""
        now = time.perf_counter()
        paused = self._paused_total + (
            now - self._paused_since if self._paused_since is not None else 0.0
        )
        real = max(now - self._start_wall - paused, 1e-9)
        sim_elapsed = self.sim.sim_time - self._start_sim
        return MonitorFigures(
            sim_time=self.sim.sim_time,
            real_time=real,
            target_rtf=self.sim.params.target_rtf,
            actual_rtf=sim_elapsed / real,
            step_ms=self.sim.get_profiling_stats()["total"],
            moving_robots=self.sim.world.motion.moving_count(),
            collisions=len(self.sim.collisions.active),
            collision_episodes=self.sim.collision_count,
            paused=self.sim.is_paused,
        )

    def _tick(self, sim: MultiRobotSimulationCore, dt: float) -> None:
        now = time.perf_counter()
        if now - self._last_show >= self.period_s:
            self._last_show = now
            self.last = self.figures()
            if self.view is not None:
                self.view.show(self.last)

    def _on_pause(self, sim: MultiRobotSimulationCore) -> None:
        self._paused_since = time.perf_counter()

    def _on_resume(self, sim: MultiRobotSimulationCore) -> None:
        if self._paused_since is not None:
            self._paused_total += time.perf_counter() - self._paused_since
            self._paused_since = None


def make_view(kind: str) -> View | None:
    """ "window" (tkinter), "terminal" (rich), "none", or "auto": a window when there is a
    display, the terminal when output is one, else nothing."""
    if kind == "auto":
        if environment.has_display() and _tk_available():
            kind = "window"
        else:
            kind = "terminal" if sys.stdout.isatty() else "none"
    if kind == "window":
        return WindowView()
    if kind == "terminal":
        return TerminalView()
    return None


def _tk_available() -> bool:
    try:
        import tkinter  # noqa: F401  (optional: some Pythons are built without it)
    except ImportError:
        return False
    return True


class TerminalView:
    """The figures as a live panel in the terminal (rich)."""

    def __init__(self) -> None:
        self._live = Live(Table(), refresh_per_second=4, transient=True)
        self._live.start()

    def show(self, figures: MonitorFigures) -> None:
        """Redraw the panel."""
        table = Table(title="fleetsim monitor", show_header=False)
        for name, value in figures.rows():
            table.add_row(name, value)
        self._live.update(table)

    def close(self) -> None:
        """End the live panel."""
        self._live.stop()


class WindowView:
    """The figures in a small tkinter window."""

    def __init__(self) -> None:
        import tkinter as tk  # only when a window is wanted and possible

        self._root = tk.Tk()
        self._root.title("fleetsim monitor")
        self._labels: dict[str, Any] = {}
        for i, (name, _) in enumerate(MonitorFigures(0, 0, 0, 0, 0, 0, 0, 0, False).rows()):
            tk.Label(self._root, text=name, anchor="w", width=14).grid(row=i, column=0, sticky="w")
            self._labels[name] = tk.Label(self._root, text="-", anchor="e", width=22)
            self._labels[name].grid(row=i, column=1, sticky="e")
        self._root.update()

    def show(self, figures: MonitorFigures) -> None:
        """Update the window."""
        for name, value in figures.rows():
            self._labels[name].configure(text=value)
        self._root.update()

    def close(self) -> None:
        """Close the window."""
        self._root.destroy()
