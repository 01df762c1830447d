"""Checks of asset files (meshes, URDFs) before PyBullet reads them.

PyBullet crashes the whole process on some broken meshes (an empty or truncated STL, an OBJ
with faces but no vertices) and reports a missing mesh inside a URDF only as "Cannot load URDF
file". These checks read the files first and raise an error that names the file and the fix.
Results are cached per file version, so a fleet loading one URDF 10,000 times checks it once.
"""

from __future__ import annotations

import functools
import math
import os
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from stat import S_ISREG

import numpy as np

from fleetsim.errors import AssetError, AssetNotFoundError

MESH_SUFFIXES = (".obj", ".stl", ".dae")
_STL_TRIANGLE = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])


def check_mesh(path: str | Path) -> None:
    """Raise `AssetNotFoundError` / `AssetError` unless `path` is a mesh PyBullet can read."""
    file = Path(path)
    if not file.is_file():
        raise AssetNotFoundError(f"mesh file not found: {path}")
    stat = file.stat()
    _check_mesh_version(str(file.resolve()), stat.st_mtime_ns, stat.st_size)


def check_urdf(path: str | Path) -> None:
    """Raise unless `path` is a readable URDF whose mesh files all exist and are valid."""
    try:
        stat = os.stat(path)
    except OSError:
        stat = None
    if stat is None or not S_ISREG(stat.st_mode):
        raise AssetNotFoundError(f"URDF file not found: {path}")
    _check_urdf_at(str(path), os.getcwd(), stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _check_urdf_at(path: str, cwd: str, dev: int, ino: int, mtime_ns: int, size: int) -> None:
    """One check per file version and the name it was given (one stat a load, no realpath)."""
    _check_urdf_version(str(Path(cwd, path).resolve()), mtime_ns, size)


@functools.lru_cache(maxsize=256)
def _check_mesh_version(path: str, mtime_ns: int, size: int) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in MESH_SUFFIXES:
        raise AssetError(f"{path}: unsupported mesh format '{suffix}' (use .obj, .stl or .dae)")
    if size == 0:
        raise AssetError(f"{path}: the mesh file is empty")
    data = Path(path).read_bytes()
    if suffix == ".stl":
        _check_stl(path, data)
    elif suffix == ".obj":
        _check_obj(path, data)
    else:
        _check_xml(path, data, "COLLADA (.dae)")


def _check_stl(path: str, data: bytes) -> None:
    if len(data) >= 84:
        (count,) = struct.unpack_from("<I", data, 80)
        if len(data) == 84 + 50 * count:  # binary STL
            if count == 0:
                raise AssetError(f"{path}: the STL file has no triangles")
            triangles = np.frombuffer(data, _STL_TRIANGLE, count=count, offset=84)
            if not np.all(np.isfinite(triangles["v"])):
                raise AssetError(f"{path}: the STL file has NaN or infinite vertices")
            return
    text = data[: 1 << 20].decode("ascii", errors="replace").lower()
    if text.lstrip().startswith("solid") and "facet" in text and text.count("vertex") >= 3:
        return
    raise AssetError(
        f"{path}: not a valid STL file (neither binary with a matching triangle count nor "
        "ASCII with facets); re-export the mesh"
    )


def _check_obj(path: str, data: bytes) -> None:
    vertices = faces = 0
    for number, raw in enumerate(data.splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if parts[0] == b"v":
            try:
                if len(parts) < 4 or not all(math.isfinite(float(v)) for v in parts[1:4]):
                    raise ValueError
            except ValueError:
                raise AssetError(f"{path} line {number}: a vertex needs 3 finite numbers") from None
            vertices += 1
        elif parts[0] == b"f":
            faces += 1
            for corner in parts[1:]:
                index = _face_index(corner, vertices)
                if index is None:
                    shown = corner.decode(errors="replace")
                    raise AssetError(
                        f"{path} line {number}: face refers to vertex {shown} "
                        f"but only {vertices} are defined before it"
                    )
    if vertices < 3 or faces == 0:
        raise AssetError(
            f"{path}: an OBJ mesh needs at least 3 vertices ('v' lines) and one face ('f' line); "
            f"found {vertices} and {faces}"
        )


def _face_index(corner: bytes, vertices: int) -> int | None:
    try:
        index = int(corner.split(b"/")[0])
    except ValueError:
        return None
    resolved = index if index > 0 else vertices + 1 + index
    return resolved if 1 <= resolved <= vertices else None


def _check_xml(path: str, data: bytes, kind: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise AssetError(f"{path}: not valid {kind} XML: {exc}") from None


@functools.lru_cache(maxsize=256)
def _check_urdf_version(path: str, mtime_ns: int, size: int) -> None:
    if size == 0:
        raise AssetError(f"{path}: the URDF file is empty")
    root = _check_xml(path, Path(path).read_bytes(), "URDF")
    if root.tag not in ("robot", "sdf"):
        raise AssetError(f"{path}: expected a <robot> (URDF) or <sdf> root, found <{root.tag}>")
    base = Path(path).parent
    for link in root.iter("link"):
        for mesh in link.iter("mesh"):
            name = mesh.get("filename")
            if not name or "://" in name:
                continue  # package:// paths are resolved by the model catalogue
            where = f"mesh '{name}' of link '{link.get('name')}' in {path}"
            target = base / name
            if not target.is_file():
                raise AssetNotFoundError(f"{where} not found (looked for {target})")
            try:
                check_mesh(target)
            except AssetError as exc:
                raise AssetError(f"{where}: {exc}") from None
