"""Build a stage's boxes into a simulation: `load_usd(sim, "twin.usdc")`. Boxes whose top is
at most `FLOOR_TOP` (the floor robots stand on: a slab under z = 0) are bodies no collision
check sees; the rest are static structure."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.collision.aabb import world_aabbs
from fleetsim.objects import SimObject
from fleetsim.usd.stage import PURPOSES, UsdScene, read_stage

RGBA = (0.62, 0.62, 0.66, 1.0)
FLOOR_RGBA = (0.32, 0.33, 0.36, 1.0)
FLOOR_TOP = 0.001  # m


def load_usd(
    sim: Any,
    path: str | Path,
    *,
    include: Sequence[str] = ("*",),
    exclude: Sequence[str] = (),
    purposes: Sequence[str] = PURPOSES,
    rgba_color: Sequence[float] = RGBA,
    triangles: Sequence[str] = (),
    hulls: Sequence[str] = (),
) -> tuple[UsdScene, list[SimObject]]:
    """Read the stage at `path` (`read_stage`: filters by prim path and purpose) and add its
    boxes to `sim` as static bodies named by their prim paths (the floor's as bodies no check
    sees); meshes matching `triangles` or `hulls` as static meshes (see `read_stage`).
    Returns the scene read and the bodies: the boxes in the scene's order, then the meshes.
    Nothing is added when the stage is refused."""
    scene = read_stage(
        path,
        include=include,
        exclude=exclude,
        purposes=purposes,
        triangles=triangles,
        hulls=hulls,
    )
    half = scene.half_extents
    top = world_aabbs(scene.centres, scene.orientations, -half, half)[1][:, 2]
    bodies: list[SimObject | None] = [None] * len(scene)
    for floor in (False, True):
        rows = np.flatnonzero((top <= FLOOR_TOP) == floor)
        made = SimObject.static_boxes(
            scene.centres[rows],
            scene.half_extents[rows],
            scene.orientations[rows],
            sim_core=sim,
            rgba_color=FLOOR_RGBA if floor else rgba_color,
            names=[scene.names[k] for k in rows.tolist()],
            collides=not floor,
        )
        for k, body in zip(rows.tolist(), made, strict=True):
            bodies[k] = body
    made = [b for b in bodies if b is not None]
    for part in scene.meshes:
        made.append(
            SimObject.static_mesh(
                part.vertices,
                part.triangles,
                sim,
                concave=part.concave,
                name=part.name,
                rgba_color=rgba_color,
            )
        )
    return scene, made
