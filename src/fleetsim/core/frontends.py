"""What the simulation calls out to without importing it: its GUI controls, its data monitor
and its recorder.

They live above the core (`fleetsim.viz`, `fleetsim.recording`), as the architecture puts them;
the core only knows these small protocols. `provide()` is called once, by the `fleetsim`
package when it is imported; a program may provide its own (a different window, a monitor that
writes to a dashboard) before it makes its simulations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fleetsim.core.simulation import MultiRobotSimulationCore


class Viewer(Protocol):
    """The GUI side of a simulation made with `gui=True` (`sim.gui`)."""

    camera_set: bool

    def frame(self, force: bool = False) -> None:
        """Called after every step and while paused: poll keys, push poses for a drawn frame."""

    def setup_camera(
        self,
        mode: str | None = None,
        view: str | None = None,
        distance: float | None = None,
        yaw: float | None = None,
        pitch: float | None = None,
        target: tuple[float, float, float] | None = None,
    ) -> tuple[float, float, float, tuple[float, float, float]]:
        """Point the camera ("auto" frames the fleet, "manual" takes distance, yaw, pitch and
        target); returns (distance, yaw, pitch, target)."""

    def configure_visualizer(
        self,
        *,
        shadows: bool | None = None,
        gui_panels: bool | None = None,
        visual_shapes: bool | None = None,
        collision_shapes: bool | None = None,
        transparency: bool | None = None,
    ) -> None:
        """Switch GUI features; None leaves one as it is."""


class Monitor(Protocol):
    """Live figures of a running simulation (`monitor: true`), started by `run_simulation`."""

    def start(self) -> Monitor:
        """Begin showing figures; returns itself."""

    def stop(self) -> None:
        """Stop and close whatever shows the figures."""


class Recorder(Protocol):
    """A recording of a simulation (`sim.record(...)`; `fleetsim.recording.Recorder`)."""

    def pause(self) -> None:
        """Leave out what happens until `resume()`."""

    def resume(self) -> None:
        """Record again."""

    def close(self) -> None:
        """Finish the recording."""


class RecorderFactory(Protocol):
    """Makes a recorder: `(sim, path, rate, metadata, out)`."""

    def __call__(
        self,
        sim: MultiRobotSimulationCore,
        path: str | Path | None,
        rate: float,
        metadata: dict[str, str] | None,
        out: Any,
    ) -> Recorder:
        """Start recording `sim`."""


@dataclass
class Frontends:
    """The factories the simulation uses: each takes the simulation and returns one."""

    viewer: Callable[[MultiRobotSimulationCore], Viewer] | None = None
    monitor: Callable[[MultiRobotSimulationCore], Monitor] | None = None
    recorder: RecorderFactory | None = None


FRONTENDS = Frontends()


def provide(
    viewer: Callable[[MultiRobotSimulationCore], Viewer] | None = None,
    monitor: Callable[[MultiRobotSimulationCore], Monitor] | None = None,
    recorder: RecorderFactory | None = None,
) -> None:
    """Set the GUI controls, data monitor and recorder simulations use from now on (None keeps
    one)."""
    if viewer is not None:
        FRONTENDS.viewer = viewer
    if monitor is not None:
        FRONTENDS.monitor = monitor
    if recorder is not None:
        FRONTENDS.recorder = recorder
