"""`ShapeCache`: PyBullet collision and visual shapes, created once per client and reused.

Shape ids belong to one PyBullet client and die with `resetSimulation`, so each backend owns its
cache and clears it on reset (a stale id would silently give a shapeless body).
"""

from __future__ import annotations

import pybullet as pb

from fleetsim.errors import BackendError
from fleetsim.geometry.shapes import ShapeParams

_GEOM = {
    "box": pb.GEOM_BOX,
    "sphere": pb.GEOM_SPHERE,
    "cylinder": pb.GEOM_CYLINDER,
    "mesh": pb.GEOM_MESH,
}


class ShapeCache:
    """Collision and visual shape ids of one PyBullet client, keyed by `ShapeParams`."""

    def __init__(self, client: int) -> None:
        self._client = client
        self._collision: dict[ShapeParams, int] = {}
        self._visual: dict[ShapeParams, int] = {}

    def __len__(self) -> int:
        return len(self._collision) + len(self._visual)

    def clear(self) -> None:
        """Forget every cached shape (the client was reset)."""
        self._collision.clear()
        self._visual.clear()

    def collision(self, shape: ShapeParams) -> int:
        """Collision shape id for `shape` (colour is ignored)."""
        key = _without_colour(shape)
        if key not in self._collision:
            kwargs = _geometry_kwargs(shape, visual=False)
            try:
                sid = pb.createCollisionShape(
                    _GEOM[shape.shape_type],
                    collisionFramePosition=shape.frame_position,
                    collisionFrameOrientation=shape.frame_orientation,
                    physicsClientId=self._client,
                    **kwargs,
                )
            except pb.error as exc:
                raise BackendError(
                    f"PyBullet could not create collision shape {shape}: {exc}"
                ) from exc
            self._collision[key] = sid
        return self._collision[key]

    def visual(self, shape: ShapeParams) -> int:
        """Visual shape id for `shape`."""
        if shape not in self._visual:
            kwargs = _geometry_kwargs(shape, visual=True)
            try:
                sid = pb.createVisualShape(
                    _GEOM[shape.shape_type],
                    rgbaColor=shape.rgba_color,
                    visualFramePosition=shape.frame_position,
                    visualFrameOrientation=shape.frame_orientation,
                    physicsClientId=self._client,
                    **kwargs,
                )
            except pb.error as exc:
                raise BackendError(
                    f"PyBullet could not create visual shape {shape}: {exc}"
                ) from exc
            self._visual[shape] = sid
        return self._visual[shape]


def _without_colour(shape: ShapeParams) -> ShapeParams:
    return ShapeParams(
        shape.shape_type,
        shape.half_extents,
        shape.radius,
        shape.height,
        shape.mesh_path,
        shape.mesh_scale,
        (0.0, 0.0, 0.0, 1.0),
        shape.frame_position,
        shape.frame_orientation,
    )


def _geometry_kwargs(shape: ShapeParams, visual: bool) -> dict[str, object]:
    if shape.shape_type == "box":
        return {"halfExtents": shape.half_extents}
    if shape.shape_type == "sphere":
        return {"radius": shape.radius}
    if shape.shape_type == "cylinder":
        # PyBullet names the cylinder's length differently for visual and collision shapes.
        return {"radius": shape.radius, ("length" if visual else "height"): shape.height}
    return {"fileName": shape.mesh_path, "meshScale": shape.mesh_scale}
