"""Meshes kept as meshes: a `Mesh` prim whose triangles collide as they are (a concave static
mesh), or whose convex hull does, where `read_stage` is asked to (`triangles`, `hulls`); the
rest of a stage is boxes. Faces of more than three corners are split into fans."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim import memory
from fleetsim.errors import ConfigError
from fleetsim.geometry.vectors import ramp

BYTES_PER_TRIANGLE = 120  # measured order: PyBullet's copy and its bounding volume tree


@dataclass
class MeshPart:
    """A mesh prim in fleetsim's world: vertices (V, 3) in metres, triangles (T, 3), and
    whether its triangles collide as they are (`concave`) or their convex hull does."""

    name: str
    vertices: np.ndarray
    triangles: np.ndarray
    concave: bool


def mesh_part(
    prim: Any, geom: Any, time: Any, matrix: np.ndarray, concave: bool, where: str
) -> MeshPart:
    """The mesh prim `prim` carried by `matrix` (4 x 4, row vectors, to fleetsim's world)."""
    mesh = geom.Mesh(prim)
    at = str(prim.GetPath())
    points = np.asarray(mesh.GetPointsAttr().Get(time) or [], dtype=np.float64).reshape(-1, 3)
    counts = np.asarray(mesh.GetFaceVertexCountsAttr().Get(time) or [], dtype=np.int64)
    corners = np.asarray(mesh.GetFaceVertexIndicesAttr().Get(time) or [], dtype=np.int64)
    if counts.sum() != len(corners) or (counts < 3).any():
        raise ConfigError(f"{where}: {at}: faceVertexCounts do not add up to its indices")
    if len(points) < 4 or (corners.size and (corners.min() < 0 or corners.max() >= len(points))):
        raise ConfigError(f"{where}: {at}: its faces name points it does not have")
    triangles = fans(counts, corners)
    memory.check_fits(len(triangles), f"triangles of {where}: {at}", BYTES_PER_TRIANGLE)
    world = np.hstack((points, np.ones((len(points), 1)))) @ matrix
    return MeshPart(at, world[:, :3], triangles, concave)


def fans(counts: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Triangles (T, 3) of faces of `counts` corners each, their corners' point indices laid
    end to end in `corners`: each face a fan from its first corner."""
    per_face = counts - 2
    first = np.cumsum(counts) - counts
    face = np.repeat(np.arange(len(counts)), per_face)
    k = ramp(per_face) + 1
    start = first[face]
    return np.stack((corners[start], corners[start + k], corners[start + k + 1]), axis=1)
