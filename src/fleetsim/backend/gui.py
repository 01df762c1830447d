"""PyBullet's GUI window as a service: keys, visualizer switches, camera, colours, images."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as pb

VISUALIZER_FLAGS = {
    "rendering": pb.COV_ENABLE_RENDERING,
    "gui_panels": pb.COV_ENABLE_GUI,
    "shadows": pb.COV_ENABLE_SHADOWS,
    "wireframe": pb.COV_ENABLE_WIREFRAME,
}


class GuiBackend:
    """GUI calls for one client (all pass the client id)."""

    def __init__(self, owner: object) -> None:
        self._owner = owner  # the Backend

    @property
    def _client(self) -> int:
        return int(self._owner.client)  # type: ignore[attr-defined]

    def triggered_keys(self) -> set[int]:
        """Keys pressed since the last call (key codes: ord('v'), 32 for space, ...)."""
        events = pb.getKeyboardEvents(physicsClientId=self._client)
        return {key for key, state in events.items() if state & pb.KEY_WAS_TRIGGERED}

    def points(
        self, xyz: np.ndarray, rgb: Sequence[float], size: float = 3.0, replace: int = -1
    ) -> int:
        """Draw points (K, 3) in one colour, in place of the drawing `replace` (its id from an
        earlier call; -1: a new one); the drawing's id."""
        colours = np.broadcast_to(np.asarray(rgb, dtype=np.float64), xyz.shape).tolist()
        return int(
            pb.addUserDebugPoints(
                np.asarray(xyz, dtype=np.float64).tolist(),
                colours,
                pointSize=size,
                replaceItemUniqueId=replace,
                physicsClientId=self._client,
            )
        )

    def loop(
        self, corners: np.ndarray, rgb: Sequence[float], width: float, replace: Sequence[int]
    ) -> list[int]:
        """Draw a closed polygon (corners (K, 3)) as K lines, each in place of the line of the
        same index in `replace` (missing: a new one); the lines' ids."""
        ends = np.roll(corners, -1, axis=0)
        ids = []
        for k, (a, b) in enumerate(zip(corners.tolist(), ends.tolist(), strict=True)):
            old = replace[k] if k < len(replace) else -1
            ids.append(
                int(
                    pb.addUserDebugLine(
                        a, b, list(rgb), lineWidth=width, replaceItemUniqueId=old,
                        physicsClientId=self._client,
                    )
                )
            )  # fmt: skip
        return ids

    def set_flag(self, name: str, enabled: bool) -> None:
        """Switch a GUI feature (`shadows`, `gui_panels`, `wireframe`)."""
        pb.configureDebugVisualizer(
            VISUALIZER_FLAGS[name], int(enabled), physicsClientId=self._client
        )

    def set_camera(
        self, distance: float, yaw: float, pitch: float, target: Sequence[float]
    ) -> None:
        """Point the GUI camera: distance in metres, yaw and pitch in degrees."""
        pb.resetDebugVisualizerCamera(
            distance, yaw, pitch, list(target), physicsClientId=self._client
        )

    def camera(self) -> tuple[float, float, float, tuple[float, float, float]]:
        """(distance, yaw, pitch, target) of the GUI camera."""
        info = pb.getDebugVisualizerCamera(physicsClientId=self._client)
        return float(info[10]), float(info[8]), float(info[9]), tuple(info[11])

    def set_alpha(
        self, body_id: int, alpha: float, colors: dict[tuple[int, int], tuple[float, ...]]
    ) -> None:
        """Set the transparency of every visual shape of a body; `colors` keeps the originals."""
        c = self._client
        for shape in pb.getVisualShapeData(body_id, physicsClientId=c):
            link = shape[1]
            original = colors.setdefault((body_id, link), tuple(shape[7]))
            pb.changeVisualShape(
                body_id, link, rgbaColor=[*original[:3], original[3] * alpha], physicsClientId=c
            )

    def capture(self, width: int, height: int) -> np.ndarray:
        """An RGB image (height, width, 3) from the GUI camera's point of view (OpenGL)."""
        c = self._client
        info = pb.getDebugVisualizerCamera(physicsClientId=c)
        return self._image(width, height, info[2], info[3], pb.ER_BULLET_HARDWARE_OPENGL)

    def render(
        self,
        width: int,
        height: int,
        distance: float,
        yaw: float,
        pitch: float,
        target: Sequence[float],
    ) -> np.ndarray:
        """An RGB image from a given camera with the software renderer (works headless)."""
        c = self._client
        view = pb.computeViewMatrixFromYawPitchRoll(
            list(target), distance, yaw, pitch, 0.0, 2, physicsClientId=c
        )
        projection = pb.computeProjectionMatrixFOV(
            60.0, width / height, 0.05, 10 * distance + 100, physicsClientId=c
        )
        return self._image(width, height, view, projection, pb.ER_TINY_RENDERER)

    def _image(
        self,
        width: int,
        height: int,
        view: Sequence[float],
        projection: Sequence[float],
        renderer: int,
    ) -> np.ndarray:
        _, _, rgba, _, _ = pb.getCameraImage(
            width,
            height,
            viewMatrix=view,
            projectionMatrix=projection,
            renderer=renderer,
            physicsClientId=self._client,
        )
        return np.reshape(np.asarray(rgba, dtype=np.uint8), (height, width, 4))[:, :, :3]
