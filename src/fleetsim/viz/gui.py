"""`GuiControls`: the PyBullet GUI of a simulation: keys, camera, visualizer switches, frames.

The simulation calls it through `fleetsim.core.frontends.Viewer` (core does not import this
module); `fleetsim` provides it when the package is imported.

Keys: SPACE pauses and resumes, `v` hides or shows visual shapes, `c` shows collision shapes
(wireframe), `t` makes static structures see-through. Frames: PyBullet draws what it holds, so
with the GUI (and no physics) poses are pushed at most `FRAME_RATE_HZ` times per wall second
instead of every step: at 50x real time that is 50 times fewer pushes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from fleetsim.core.camera import frame_fleet
from fleetsim.state import CollisionMode

if TYPE_CHECKING:
    from fleetsim.core.simulation import MultiRobotSimulationCore

FRAME_RATE_HZ = 60.0
KEY_SPACE, KEY_VISUAL, KEY_COLLISION, KEY_TRANSPARENT = 32, ord("v"), ord("c"), ord("t")
STATIC_ALPHA = 0.3


class GuiControls:
    """The GUI side of a simulation made with `gui=True`: `sim.gui`."""

    def __init__(self, sim: MultiRobotSimulationCore) -> None:
        self.sim = sim
        self.gui = sim.world.backend.window
        p = sim.params
        self.visual_shapes = True
        self.collision_shapes = False
        self.transparency = False
        self._colors: dict[tuple[int, int], tuple[float, ...]] = {}
        self._last_frame = 0.0
        self.camera_set = False
        self.configure_visualizer(
            shadows=p.enable_shadows,
            gui_panels=p.enable_gui_panels,
            visual_shapes=p.enable_visual_shapes,
            collision_shapes=p.enable_collision_shapes,
            transparency=p.enable_structure_transparency,
        )

    # -- frames and keys ----------------------------------------------------------------------

    def frame(self, force: bool = False) -> None:
        """Poll keys; push poses to PyBullet if a frame is due (at most FRAME_RATE_HZ)."""
        self.handle_keys()
        now = time.perf_counter()
        if force or now - self._last_frame >= 1.0 / FRAME_RATE_HZ:
            self._last_frame = now
            self.sim.sync()

    def handle_keys(self) -> None:
        """Act on the keys pressed since the last frame (SPACE, v, c, t)."""
        keys = self.gui.triggered_keys()
        if KEY_SPACE in keys:
            if self.sim.is_paused:
                self.sim.resume()
            else:
                self.sim.pause()
        if KEY_VISUAL in keys:
            self.configure_visualizer(visual_shapes=not self.visual_shapes)
        if KEY_COLLISION in keys:
            self.configure_visualizer(collision_shapes=not self.collision_shapes)
        if KEY_TRANSPARENT in keys:
            self.configure_visualizer(transparency=not self.transparency)

    # -- visualizer ---------------------------------------------------------------------------

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
        if shadows is not None:
            self.gui.set_flag("shadows", shadows)
        if gui_panels is not None:
            self.gui.set_flag("gui_panels", gui_panels)
        if collision_shapes is not None:
            self.collision_shapes = collision_shapes
            self.gui.set_flag("wireframe", collision_shapes)
        if visual_shapes is not None and visual_shapes != self.visual_shapes:
            self.visual_shapes = visual_shapes
            self._apply_alpha(self._all_bodies())
        if transparency is not None and transparency != self.transparency:
            self.transparency = transparency
            self._apply_alpha(self._static_bodies())

    def _apply_alpha(self, body_ids: list[int]) -> None:
        static = set(self._static_bodies())
        for body in body_ids:
            alpha = (
                0.0
                if not self.visual_shapes
                else (STATIC_ALPHA if self.transparency and body in static else 1.0)
            )
            self.gui.set_alpha(body, alpha, self._colors)

    def _all_bodies(self) -> list[int]:
        ids: list[int] = self.sim.world.bodies["body_id"].tolist()
        return ids + ([self.sim.floor_id] if self.sim.floor_id is not None else [])

    def _static_bodies(self) -> list[int]:
        b = self.sim.world.bodies
        static: list[int] = b["body_id"][b["collision_mode"] == int(CollisionMode.STATIC)].tolist()
        return sorted(set(static) | self.sim.static_body_ids)

    # -- camera -------------------------------------------------------------------------------

    def setup_camera(
        self,
        mode: str | None = None,
        view: str | None = None,
        distance: float | None = None,
        yaw: float | None = None,
        pitch: float | None = None,
        target: tuple[float, float, float] | None = None,
    ) -> tuple[float, float, float, tuple[float, float, float]]:
        """Point the camera; "auto" frames every body. Returns (distance, yaw, pitch, target)."""
        p = self.sim.params
        mode = mode or p.camera_mode
        view = view or p.camera_view
        if mode == "auto":
            distance, yaw, pitch, target = frame_fleet(self.sim, view)
        else:
            distance = p.camera_distance if distance is None else distance
            yaw = p.camera_yaw if yaw is None else yaw
            pitch = p.camera_pitch if pitch is None else pitch
            target = p.camera_target if target is None else target
        self.gui.set_camera(distance, yaw, pitch, target)
        self.camera_set = True
        return distance, yaw, pitch, tuple(target)  # type: ignore[return-value]
