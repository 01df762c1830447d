"""Build a stage's boxes into a simulation: `load_usd(sim, "twin.usdc")`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fleetsim.objects import SimObject
from fleetsim.usd.stage import PURPOSES, UsdScene, read_stage

RGBA = (0.62, 0.62, 0.66, 1.0)


def load_usd(
    sim: Any,
    path: str | Path,
    *,
    include: Sequence[str] = ("*",),
    exclude: Sequence[str] = (),
    purposes: Sequence[str] = PURPOSES,
    rgba_color: Sequence[float] = RGBA,
) -> tuple[UsdScene, list[SimObject]]:
    """Read the stage at `path` (`read_stage`: filters by prim path and purpose) and add its
    boxes to `sim` as static bodies named by their prim paths. Returns the scene read and the
    bodies, in the scene's order. Nothing is added when the stage is refused."""
    scene = read_stage(path, include=include, exclude=exclude, purposes=purposes)
    bodies = SimObject.static_boxes(
        scene.centres,
        scene.half_extents,
        scene.orientations,
        sim_core=sim,
        rgba_color=rgba_color,
        names=scene.names,
    )
    return scene, bodies
