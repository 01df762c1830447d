"""A site fleets drive in, from a stage: the navigation graph of its marked prims (`Mark`:
`fleetsim:node`, `fleetsim:lanes`), or, when none is marked, a grid map of the floor plan
(cells free or blocked at robot height) whose free cells are the graph, as a MovingAI map's.

A cell is blocked when a box reaching into the `clearance` band of heights (robot height
above the floor; by default 0.05 m to 2 m, so a floor slab blocks nothing) covers part of
it: boxes turned about the vertical are tested exactly (their footprint against the cell),
boxes tilted out of it by the box square to the axes round their corners, meshes kept as
meshes by the box of their vertices. The map spans every box of the stage (a floor sets the
site's extent) and every marked node.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.collision.aabb import world_aabbs
from fleetsim.errors import ConfigError
from fleetsim.geometry import quat
from fleetsim.geometry.vectors import ramp
from fleetsim.site import Site
from fleetsim.site.graph import NavGraph
from fleetsim.site.movingai import GridMap, grid_from_mask
from fleetsim.usd.stage import KINDS, PURPOSES, UsdScene, read_stage

CLEARANCE = (0.05, 2.0)  # m: the heights at which a box blocks a cell
_EPS = 1e-9  # m: boxes that only touch a cell's edge leave it free


def site_from_stage(
    source: str | Path | UsdScene,
    *,
    cell_size: float = 0.5,
    clearance: tuple[float, float] = CLEARANCE,
    include: Sequence[str] = ("*",),
    exclude: Sequence[str] = (),
    purposes: Sequence[str] = PURPOSES,
) -> Site:
    """The site of a stage (a path, or a `UsdScene` already read): its marked nodes and lanes
    when it has any, else the free cells of its grid map (`grid_map`) 4-connected."""
    scene = (
        source
        if isinstance(source, UsdScene)
        else read_stage(source, include=include, exclude=exclude, purposes=purposes)
    )
    if scene.marks:
        return Site(marked_graph(scene), source=str(scene.path))
    grid = grid_map(scene, cell_size, clearance)
    return Site(grid.graph, grid=grid, source=str(scene.path))


def marked_graph(scene: UsdScene) -> NavGraph:
    """The navigation graph of the scene's marked prims: a node each, lanes where
    `fleetsim:lanes` points (both ways unless `fleetsim:one_way`)."""
    name_of = {m.path: m.name for m in scene.marks}
    nodes, lanes, seen = [], [], set()
    for m in scene.marks:
        node: dict[str, Any] = {
            "name": m.name,
            "x": float(m.position[0]),
            "y": float(m.position[1]),
        }
        node.update({str(KINDS[k]): True for k in m.kinds if KINDS[k] is not None})
        nodes.append(node)
        for target in m.lanes:
            if target not in name_of:
                raise ConfigError(
                    f"{scene.path}: {m.path}: fleetsim:lanes points to {target}, which is not "
                    f"a marked node (give it a fleetsim:node)"
                )
            key = (m.path, target) if m.one_way else tuple(sorted((m.path, target)))
            if key in seen:  # (two nodes that list each other: one lane both ways)
                continue
            seen.add(key)
            lanes.append({"from": m.name, "to": name_of[target], "bidirectional": not m.one_way})
    try:
        return NavGraph.from_lists(nodes, lanes)
    except ConfigError as e:
        raise ConfigError(f"{scene.path}: the marked nodes: {e}") from e


def grid_map(
    scene: UsdScene, cell_size: float = 0.5, clearance: tuple[float, float] = CLEARANCE
) -> GridMap:
    """The floor plan of the scene's boxes as a grid map of `cell_size` cells."""
    if not (math.isfinite(cell_size) and cell_size > 0):
        raise ConfigError(f"cell_size must be > 0 m, got {cell_size!r}")
    low, high = clearance
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ConfigError(f"clearance must be two heights, low < high (m), got {clearance!r}")
    lo, hi = _world_boxes(scene)
    spots = np.array([m.position[:2] for m in scene.marks]).reshape(-1, 2)
    corners = np.concatenate((lo[:, :2], hi[:, :2], spots))
    if len(corners) == 0:
        raise ConfigError(f"{scene.path}: no geometry to make a floor plan of")
    origin = np.floor(corners.min(axis=0) / cell_size) * cell_size
    width, height = np.maximum(np.ceil((corners.max(axis=0) - origin) / cell_size), 1).astype(int)
    mask = np.zeros((int(height), int(width)), dtype=bool)
    reach = (hi[:, 2] > low) & (lo[:, 2] < high)
    _block(mask, scene, np.flatnonzero(reach), lo, hi, origin, cell_size)
    return grid_from_mask(mask, cell_size, (float(origin[0]), float(origin[1])), str(scene.path))


def _world_boxes(scene: UsdScene) -> tuple[np.ndarray, np.ndarray]:
    """The world boxes of the scene's boxes, then of its meshes (their vertices' bounds)."""
    half = scene.half_extents
    low, high = world_aabbs(scene.centres, scene.orientations, -half, half)
    lo = [low, *(m.vertices.min(axis=0)[None] for m in scene.meshes)]
    hi = [high, *(m.vertices.max(axis=0)[None] for m in scene.meshes)]
    return np.concatenate(lo), np.concatenate(hi)


def _block(
    mask: np.ndarray,
    scene: UsdScene,
    rows: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    origin: np.ndarray,
    cell: float,
) -> None:
    """Mark the cells the footprints of boxes `rows` cover."""
    if rows.size == 0:
        return
    height, width = mask.shape
    first = np.floor((lo[rows, :2] - origin) / cell + _EPS).astype(np.int64)
    last = np.ceil((hi[rows, :2] - origin) / cell - _EPS).astype(np.int64) - 1
    first, last = np.maximum(first, 0), np.minimum(last, [width - 1, height - 1])
    span = np.maximum(last - first + 1, 0)
    count = span[:, 0] * span[:, 1]
    box = np.repeat(rows, count)
    k = ramp(count)
    i = np.repeat(first[:, 0], count) + k % np.repeat(np.maximum(span[:, 0], 1), count)
    j = np.repeat(first[:, 1], count) + k // np.repeat(np.maximum(span[:, 0], 1), count)
    upright = box < len(scene)  # (the rows past the boxes are meshes: their bounds cover)
    q = scene.orientations[box[upright]]
    upright[upright] = (np.abs(q[:, 0]) < 1e-9) & (np.abs(q[:, 1]) < 1e-9)
    covered = ~upright
    at = np.flatnonzero(upright)
    covered[at] = _footprint_meets_cell(scene, box[at], i[at], j[at], origin, cell)
    mask[height - 1 - j[covered], i[covered]] = True


def _footprint_meets_cell(
    scene: UsdScene, box: np.ndarray, i: np.ndarray, j: np.ndarray, origin: np.ndarray, cell: float
) -> np.ndarray:
    """Whether the footprint of each upright box (a rectangle turned by its yaw) overlaps cell
    (i, j) by more than an edge: the cell's axes are met already; the rectangle's two axes."""
    yaw = quat.yaw_of(scene.orientations[box])
    axes = np.stack((np.cos(yaw), np.sin(yaw)), axis=1)
    normals = np.stack((-axes[:, 1], axes[:, 0]), axis=1)
    centre = scene.centres[box, :2]
    corner = origin + np.stack((i, j), axis=1) * cell
    corners = corner[:, None, :] + np.array([[0, 0], [cell, 0], [0, cell], [cell, cell]])
    meets = np.ones(len(box), dtype=bool)
    for axis, half in ((axes, scene.half_extents[box, 0]), (normals, scene.half_extents[box, 1])):
        offset = np.einsum("kcd,kd->kc", corners - centre[:, None, :], axis)
        meets &= (offset.min(axis=1) < half - _EPS) & (offset.max(axis=1) > -half + _EPS)
    return meets
