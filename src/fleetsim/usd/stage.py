"""Read an OpenUSD stage (`.usda`, `.usdc`, `.usdz`) into static boxes in fleetsim's world.

Every geometric prim (`Mesh`, `Cube`, `Cylinder`, `Sphere`, `Capsule`, `Cone`...) becomes a
box: its extent (a mesh's from its points) carried by its world transform, nested `Xform`s,
instanceable references (read through their instance proxies) and units (`metersPerUnit`) and
up axis (`Y` or `Z`) included, in metres with Z up (`boxes.turned_boxes`). A `PointInstancer`
gives a box per instance and geometric prim of its prototype, its transforms read as one
array. Each box is named by its prim's path (an instance's by its instancer's path, the
instance's index and the prim's path inside the prototype, `/World/Racks[12]/Box`).

Prims marked for fleets (`fleetsim:node`, `fleetsim:lanes`; see `Mark`) are read too: the
navigation graph of `fleetsim.usd.site`. What fleetsim does not use (lights, materials,
cameras, physics schemas, skeletons) is listed by kind in `UsdScene.unused` and reported once
in the log; nothing is dropped silently. A
missing file, a stage USD cannot read, composition errors (a missing reference, a cycle) and
a stage whose boxes would not fit in memory are `ConfigError`s that name the file, before
anything is built. Needs `usd-core` (`pip install "fleetsim[usd]"`).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim import memory
from fleetsim.errors import AssetNotFoundError, ConfigError
from fleetsim.usd.boxes import stage_frame, turned_boxes
from fleetsim.usd.meshes import MeshPart, mesh_part

log = logging.getLogger(__name__)

SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
PURPOSES = ("default", "render")  # which geometry becomes boxes (not "proxy", "guide")
UNUSED_KINDS = {  # prim type -> what fleetsim reports it as
    **dict.fromkeys(
        (
            "DistantLight",
            "DomeLight",
            "DomeLight_1",
            "SphereLight",
            "RectLight",
            "DiskLight",
            "CylinderLight",
            "PortalLight",
            "GeometryLight",
        ),
        "lights",
    ),
    **dict.fromkeys(("Material", "Shader", "NodeGraph"), "materials"),
    "Camera": "cameras",
    **dict.fromkeys(("SkelRoot", "Skeleton", "SkelAnimation", "BlendShape"), "skeletons"),
}
STRUCTURE = ("", "Xform", "Scope", "PointInstancer")  # prims that hold others (read through)
NODE_ATTR, NAME_ATTR, LANES_REL, ONE_WAY_ATTR = (
    "fleetsim:node",
    "fleetsim:name",
    "fleetsim:lanes",
    "fleetsim:one_way",
)
KINDS = {  # fleetsim:node's values -> the navigation graph's node property
    "waypoint": None,
    "charger": "charger",
    "parking": "parking_spot",
    "holding": "holding_point",
    "pickup": "pickup",
    "dropoff": "dropoff",
}


@dataclass
class Mark:
    """A prim marked as a navigation node: `fleetsim:node` (a string: waypoint, charger,
    parking, holding, pickup or dropoff, or several joined by commas), `fleetsim:name` (the
    node's name; default the prim's name), `fleetsim:lanes` (a relationship to the nodes it has
    lanes to), `fleetsim:one_way` (those lanes go one way). Its position is the prim's origin
    in fleetsim's world."""

    path: str
    name: str
    kinds: tuple[str, ...]
    position: np.ndarray
    lanes: tuple[str, ...]  # the prim paths it has lanes to
    one_way: bool


@dataclass
class UsdScene:
    """The boxes read from a stage, in metres with Z up: centres, half extents (K, 3),
    orientations (K, 4) (x, y, z, w), and the prim path of each (`names`)."""

    path: Path
    names: list[str]
    centres: np.ndarray
    half_extents: np.ndarray
    orientations: np.ndarray
    meters_per_unit: float
    up_axis: str
    unused: dict[str, list[str]] = field(default_factory=dict)  # kind -> prim paths
    skipped: int = 0  # geometric prims left out by purpose or path filters
    marks: list[Mark] = field(default_factory=list)  # prims marked as navigation nodes
    meshes: list[MeshPart] = field(default_factory=list)  # prims kept as meshes

    def __len__(self) -> int:
        return len(self.names)


def pxr_modules() -> Any:
    """`pxr` (usd-core), or a clear error saying how to install it."""
    try:
        import pxr  # noqa: F401
        from pxr import Usd, UsdGeom
    except ImportError as e:
        raise ConfigError(
            'reading OpenUSD needs Pixar\'s usd-core: pip install "fleetsim[usd]"'
        ) from e
    return Usd, UsdGeom


def read_stage(
    path: str | Path,
    *,
    include: Sequence[str] = ("*",),
    exclude: Sequence[str] = (),
    purposes: Sequence[str] = PURPOSES,
    triangles: Sequence[str] = (),
    hulls: Sequence[str] = (),
) -> UsdScene:
    """The static boxes of the stage at `path`: geometric prims whose path matches one of
    `include` and none of `exclude` (shell patterns on prim paths, `/World/Racks/*`) and
    whose computed purpose is one of `purposes`. `Mesh` prims (not instances) matching
    `triangles` are kept as meshes whose triangles collide, those matching `hulls` as their
    convex hulls (`UsdScene.meshes`)."""
    usd, geom = pxr_modules()
    stage, where = open_stage(path)
    frame = stage_frame(float(geom.GetStageMetersPerUnit(stage)), str(geom.GetStageUpAxis(stage)))
    shaped = (tuple(triangles), tuple(hulls))
    reader = _Reader(stage, where, frame, tuple(include), tuple(exclude), tuple(purposes), shaped)
    reader.traverse(usd, geom)
    return reader.scene(float(geom.GetStageMetersPerUnit(stage)), str(geom.GetStageUpAxis(stage)))


def open_stage(path: str | Path) -> tuple[Any, Path]:
    """The stage at `path`, composed, or a `ConfigError` naming the file and what is wrong."""
    usd, _ = pxr_modules()
    from pxr import Tf

    where = Path(path)
    if where.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"{where}: not an OpenUSD file (expected one of {', '.join(SUFFIXES)})")
    if not where.is_file():
        raise AssetNotFoundError(f"{where}: no such OpenUSD file")
    try:
        stage = usd.Stage.Open(str(where), usd.Stage.LoadAll)
    except Tf.ErrorException as e:
        first = str(e).strip().splitlines()
        raise ConfigError(f"{where}: USD cannot read it: {first[-1] if first else e}") from e
    if stage is None:
        raise ConfigError(f"{where}: USD cannot read it")
    errors = stage.GetCompositionErrors()
    if errors:
        shown = "; ".join(str(e).strip().splitlines()[0] for e in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise ConfigError(
            f"{where}: the stage does not compose: {shown}{more}; fix or remove the broken "
            f"references"
        )
    return stage, where


class _Reader:
    """One traversal of a stage: the boxes' matrices and local extents, and what is unused."""

    def __init__(
        self,
        stage: Any,
        where: Path,
        frame: np.ndarray,
        include: tuple[str, ...],
        exclude: tuple[str, ...],
        purposes: tuple[str, ...],
        shaped: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    ) -> None:
        self.stage, self.where, self.frame = stage, where, frame
        self.include, self.exclude, self.purposes = include, exclude, purposes
        self.shaped = shaped  # (the patterns of meshes kept as triangles, and as hulls)
        self.names: list[str] = []
        self.matrices: list[np.ndarray] = []  # (k, 4, 4) blocks
        self.extents: list[np.ndarray] = []  # (k, 2, 3) blocks
        self.unused: dict[str, list[str]] = {}
        self.skipped = 0
        self.marks: list[Mark] = []
        self.meshes: list[MeshPart] = []

    def wanted(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in self.include) and not any(
            fnmatch.fnmatchcase(path, p) for p in self.exclude
        )

    def traverse(self, usd: Any, geom: Any) -> None:
        time = usd.TimeCode.EarliestTime()  # (a value sampled over time: its first sample)
        xforms = geom.XformCache(time)
        walk = iter(usd.PrimRange.Stage(self.stage, usd.TraverseInstanceProxies()))
        for prim in walk:
            self._note_unused(prim, geom)
            if prim.HasAttribute(NODE_ATTR):
                self._mark(prim, xforms)
            if prim.IsA(geom.PointInstancer):
                self._instancer(geom.PointInstancer(prim), xforms, geom, time)
                walk.PruneChildren()  # (its prototypes are read through it)
            elif prim.IsA(geom.Gprim):
                if not self._selected(prim, geom):
                    continue
                world = np.array(xforms.GetLocalToWorldTransform(prim)) @ self.frame
                concave = self._kept_as_mesh(prim, geom)
                if concave is not None:
                    where = str(self.where)
                    self.meshes.append(mesh_part(prim, geom, time, world, concave, where))
                    continue
                extent = _extent(geom, prim, time)
                if extent is None:  # (an empty mesh, a volume: nothing to collide with)
                    self.unused.setdefault("geometry without extent", []).append(
                        str(prim.GetPath())
                    )
                    continue
                self.names.append(str(prim.GetPath()))
                self.matrices.append(world[None])
                self.extents.append(extent[None])

    def _kept_as_mesh(self, prim: Any, geom: Any) -> bool | None:
        """True for a mesh whose triangles collide, False for one whose hull does, None for
        a box."""
        if not prim.IsA(geom.Mesh):
            return None
        path = str(prim.GetPath())
        triangles, hulls = self.shaped
        if any(fnmatch.fnmatchcase(path, p) for p in triangles):
            return True
        if any(fnmatch.fnmatchcase(path, p) for p in hulls):
            return False
        return None

    def _mark(self, prim: Any, xforms: Any) -> None:
        at = str(prim.GetPath())
        value = prim.GetAttribute(NODE_ATTR).Get()
        kinds = tuple(k.strip() for k in str(value or "").split(",") if k.strip())
        wrong = [k for k in kinds if k not in KINDS]
        if not kinds or wrong:
            raise ConfigError(
                f"{self.where}: {at}: {NODE_ATTR} = {value!r}: expected one or more of "
                f"{', '.join(KINDS)} (joined by commas)"
            )
        name = prim.GetAttribute(NAME_ATTR).Get() if prim.HasAttribute(NAME_ATTR) else None
        lanes = prim.GetRelationship(LANES_REL)
        one_way = (
            prim.GetAttribute(ONE_WAY_ATTR).Get() if prim.HasAttribute(ONE_WAY_ATTR) else False
        )
        origin = np.array(xforms.GetLocalToWorldTransform(prim))[3] @ self.frame
        self.marks.append(
            Mark(
                at,
                str(name) if name else str(prim.GetName()),
                kinds,
                origin[:3],
                tuple(str(t) for t in lanes.GetTargets()) if lanes else (),
                bool(one_way),
            )
        )

    def _selected(self, prim: Any, geom: Any) -> bool:
        purpose = str(geom.Imageable(prim).ComputePurpose())
        if purpose not in self.purposes or not self.wanted(str(prim.GetPath())):
            self.skipped += 1
            return False
        return True

    def _note_unused(self, prim: Any, geom: Any) -> None:
        typed = str(prim.GetTypeName())
        kind = UNUSED_KINDS.get(typed)
        if kind is None and typed.startswith("Physics"):
            kind = "physics schemas"
        elif kind is None and typed not in STRUCTURE and not prim.IsA(geom.Gprim):
            kind = f"other prims ({typed})"
        if kind is not None:
            self.unused.setdefault(kind, []).append(str(prim.GetPath()))
        for schema in prim.GetAppliedSchemas():
            if str(schema).startswith("Physics"):
                self.unused.setdefault("physics schemas", []).append(str(prim.GetPath()))
            elif str(schema).startswith("MaterialBindingAPI"):
                self.unused.setdefault("materials", []).append(str(prim.GetPath()))

    def _instancer(self, instancer: Any, xforms: Any, geom: Any, time: Any) -> None:
        """A box per instance and geometric prim of its prototype."""
        at = str(instancer.GetPath())
        targets = instancer.GetPrototypesRel().GetTargets()
        index = np.asarray(instancer.GetProtoIndicesAttr().Get(time) or [], dtype=np.int64)
        if index.size == 0 or not targets:
            return
        if (index < 0).any() or (index >= len(targets)).any():
            raise ConfigError(
                f"{self.where}: {at}: protoIndices name prototypes {int(index.min())} to "
                f"{int(index.max())}, but it has {len(targets)}"
            )
        parts = [self._prototype(self.stage.GetPrimAtPath(t), xforms, geom, time) for t in targets]
        per_instance = np.array([len(p[0]) for p in parts])[index]
        memory.check_fits(int(per_instance.sum()), f"boxes from {self.where}: {at}")
        placed = np.array(instancer.ComputeInstanceTransformsAtTime(time, time)).reshape(-1, 4, 4)
        if len(placed) != len(index):
            raise ConfigError(
                f"{self.where}: {at}: {len(index)} protoIndices but positions, orientations or "
                f"scales for {len(placed)} instances: give each instance its values"
            )
        world = np.array(xforms.GetLocalToWorldTransform(instancer.GetPrim())) @ self.frame
        placed = placed @ world  # (instances, 4, 4): prototype root -> fleetsim's world
        for p, (names, local, extents) in enumerate(parts):
            chosen = np.flatnonzero(index == p)
            if chosen.size == 0 or not names:
                continue
            for name, matrix, extent in zip(names, local, extents, strict=True):
                self.matrices.append(matrix @ placed[chosen])
                self.extents.append(np.broadcast_to(extent, (chosen.size, 2, 3)))
                self.names.extend(f"{at}[{k}]{name}" for k in chosen.tolist())

    def _prototype(
        self, root: Any, xforms: Any, geom: Any, time: Any
    ) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
        """The geometric prims of a prototype: their paths inside it, their transforms to the
        prototype root's frame (the instance transforms carry the root's own), extents."""
        if not root.IsValid():
            return [], [], []
        usd = pxr_modules()[0]
        base = np.linalg.inv(np.array(xforms.GetLocalToWorldTransform(root)))
        names, matrices, extents = [], [], []
        for prim in usd.PrimRange(root, usd.TraverseInstanceProxies()):
            if not prim.IsA(geom.Gprim) or not self._selected(prim, geom):
                continue
            extent = _extent(geom, prim, time)
            if extent is None:
                continue
            inside = str(prim.GetPath())[len(str(root.GetPath().GetParentPath())) :]
            names.append(inside if inside.startswith("/") else "/" + inside)
            matrices.append(np.array(xforms.GetLocalToWorldTransform(prim)) @ base)
            extents.append(extent)
        return names, matrices, extents

    def scene(self, meters_per_unit: float, up_axis: str) -> UsdScene:
        """The boxes read, turned into fleetsim's world; the unused kinds logged once."""
        if self.unused:
            told = "; ".join(
                f"{kind}: {len(paths)} ({', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})"
                for kind, paths in sorted(self.unused.items())
            )
            log.warning("%s: not used by fleetsim: %s", self.where, told)
        if not self.names:
            empty = np.empty((0, 3))
            return UsdScene(
                self.where, [], empty, empty.copy(), np.empty((0, 4)), meters_per_unit, up_axis,
                self.unused, self.skipped, self.marks, self.meshes,
            )  # fmt: skip
        matrices = np.concatenate(self.matrices)
        extents = np.concatenate(self.extents)
        centres, halves, orientations = turned_boxes(matrices, extents[:, 0], extents[:, 1])
        return UsdScene(
            self.where, self.names, centres, halves, orientations, meters_per_unit, up_axis,
            self.unused, self.skipped, self.marks, self.meshes,
        )  # fmt: skip


def _extent(geom: Any, prim: Any, time: Any) -> np.ndarray | None:
    """The prim's local extent (2, 3), or None when it has none (an empty mesh)."""
    extent = geom.Boundable.ComputeExtentFromPlugins(geom.Boundable(prim), time)
    if extent is None or len(extent) != 2:
        return None
    box = np.array(extent, dtype=np.float64)
    return box if np.isfinite(box).all() and (box[1] >= box[0]).all() else None
