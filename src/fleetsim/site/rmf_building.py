"""Open-RMF traffic-editor buildings (`.building.yaml`): every level's navigation graph, walls,
doors and the lifts, each level where RMF's map generator puts it.

Used fields, per level: `elevation`, `vertices` ([x, y, z, name, {params}]), `measurements`
([a, b, {distance: [3, metres]}]) for the reference level's scale, `fiducials` ([x, y, name])
to place the other levels (see `rmf_placement`), `lanes` ([a, b, {bidirectional, speed_limit,
mutex, graph_idx}]), `walls` ([a, b, {texture_height}]), `doors` ([a, b, {name, type}]); vertex
params `is_charger`, `is_parking_spot`, `is_holding_point`, `pickup_dispenser`,
`dropoff_ingestor`, `spawn_robot_name`, `spawn_robot_type`, `dock_name`; top level:
`building_name` (or `name`), `coordinate_system`, `reference_level_name`, and `lifts` (x, y,
yaw, width, depth, level_doors, doors, reference_floor_name, initial_floor_name). A vertex
inside a lift's shaft on a level the lift serves belongs to that lift (`lift_of`), as RMF
marks it. What the loader does not use (floors, holes, models, layers, features, lane
orientation, crowd_sim) is listed by name in `ignored`.

A vertex without a name is node `v<index>` (`<level>:v<index>` in a building where several
levels have lanes, so node names stay unique) and is listed in `unnamed`, so exports can give
it an empty name as RMF does. With `coordinate_system: cartesian_meters` vertices are metres
already (no placement); parameters are [type, value] pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, closest, is_finite_number
from fleetsim.site.graph import NavGraph
from fleetsim.site.rmf_lifts import LIFT_GAP_M, Lift, at_line, in_lifts, param, read_lifts
from fleetsim.site.rmf_placement import Placement, from_fiducials
from fleetsim.yaml_source import parse_bounded

__all__ = ["LIFT_GAP_M", "BuildingSite", "Door", "Lift", "Spawn", "load_rmf_building"]
_at, _param = at_line, param

FLAGS = {
    "is_charger": "charger",
    "is_parking_spot": "parking_spot",
    "is_holding_point": "holding_point",
}
NAMED = {"pickup_dispenser": "pickup", "dropoff_ingestor": "dropoff"}
WALL_HEIGHT_M = 2.5
USED_LEVEL_KEYS = {
    "elevation",
    "vertices",
    "measurements",
    "fiducials",
    "lanes",
    "walls",
    "doors",
    "drawing",
    "flattened_x_offset",
    "flattened_y_offset",
    "layers",
}
LEVEL_KEYS = ("vertices", "lanes", "walls", "measurements", "doors", "fiducials")
TOP_KEYS = {
    "levels",
    "lifts",
    "building_name",
    "name",
    "coordinate_system",
    "crowd_sim",
    "reference_level_name",
    "graphs",
    "parameters",
}
DOOR_TYPES = ("hinged", "double_hinged", "sliding", "double_sliding")  # traffic-editor's
FIDUCIAL_WARN_M = 0.25  # a fiducial farther than this from where the fit puts it is said


@dataclass
class Spawn:
    """A robot the building places at a vertex (`spawn_robot_name` / `spawn_robot_type`)."""

    robot_name: str
    robot_type: str
    node: str


@dataclass
class Door:
    """A door of a level: its name, type (hinged, sliding, double_hinged, double_sliding) and
    its two end points (m)."""

    name: str
    kind: str
    ends: np.ndarray  # (2, 2)
    level: str
    where: str = ""  # its place in the file, for messages


@dataclass
class BuildingSite:
    """A building's levels (or the one chosen): one graph over them, walls (K, 4)
    [x0, y0, x1, y1] m with their heights and the elevation of their level, robots to
    spawn, docks by node, doors, lifts, each level's elevation, and the reference level's
    scale (m per pixel; 1 for metric files)."""

    level: str | None  # the level chosen, or None for the whole building
    graph: NavGraph
    walls: np.ndarray
    wall_heights: np.ndarray
    spawns: list[Spawn] = field(default_factory=list)
    docks: dict[str, str] = field(default_factory=dict)
    scale: float = 1.0
    name: str = ""  # the building's name, as RMF reads it
    doors: list[Door] = field(default_factory=list)
    unnamed: frozenset[str] = frozenset()  # nodes whose vertex has no name
    elevations: dict[str, float] = field(default_factory=dict)  # level -> metres
    wall_bases: np.ndarray = field(default_factory=lambda: np.empty(0))  # (K,) elevations
    lifts: list[Lift] = field(default_factory=list)
    lift_of: dict[str, str] = field(default_factory=dict)  # node -> the lift it is in
    placements: dict[str, Placement] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # what the file has that is not used


def load_rmf_building(
    path: str | Path, level: str | None = None, graph_idx: int = 0
) -> BuildingSite:
    """Read every level (or only `level`) and one navigation graph (default 0)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"building file not found: {path}")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it as text ({exc})") from None
    data = parse_bounded(text, file)  # (nesting bounded: a line, not a RecursionError)
    levels = data.get("levels") if isinstance(data, dict) else None
    if not isinstance(levels, dict) or not levels:
        raise ConfigError(f"{file}: not a traffic-editor building (no 'levels')")
    if level is not None and level not in levels:
        guess = closest(str(level), [str(k) for k in levels])
        hint = f"did you mean '{guess}'?" if guess else f"levels: {', '.join(map(str, levels))}"
        raise ConfigError(f"{file}: no level '{level}': {hint}")
    specs = {str(name): _level_spec(file, text, levels, name) for name in levels}
    system = data.get("coordinate_system", "reference_image")
    if system not in ("reference_image", "cartesian_meters"):
        raise ConfigError(
            f"{file}: coordinate_system '{system}' (fleetsim reads reference_image and "
            "cartesian_meters)"
        )
    reference = str(data.get("reference_level_name") or next(iter(specs)))
    if reference not in specs:
        raise ConfigError(f"{file}: reference_level_name '{reference}' is not a level")
    ignored: list[str] = [
        f"{k} (not a section of a building file fleetsim knows)"
        for k in map(str, data)
        if k not in TOP_KEYS
    ]
    placements = _placements(file, specs, reference, system, level, ignored)
    chosen = [level] if level is not None else list(specs)
    several = sum(bool(spec.get("lanes")) for spec in specs.values()) > 1  # levels with lanes
    site = _levels(file, text, specs, chosen, placements, graph_idx, several)
    _unique_doors(site.doors)
    one = site.graph.level_names[0] if len(site.graph.level_names) == 1 else None
    site.level = level if level is not None else one  # None: the graph spans levels
    site.scale = placements[reference].scale
    site.placements = placements
    site.name = str(data.get("building_name") or data.get("name") or file.name.split(".")[0])
    site.lifts = read_lifts(
        file, text, data.get("lifts") or {}, placements, reference, specs, ignored
    )
    site.lift_of = in_lifts(site.lifts, site.graph)
    for name, spec in specs.items():
        extra = sorted(str(k) for k in spec if k not in USED_LEVEL_KEYS)
        ignored += [f"level {name}: {k}" for k in extra]
        turned = sum(
            1
            for lane in spec.get("lanes") or []
            if len(lane) > 2 and _param(lane[2], "orientation")
        )
        if turned:
            ignored.append(
                f"level {name}: lane orientation on {turned} lane(s) (robots may "
                "drive them facing either way)"
            )
    ignored += [f"{k}" for k in ("crowd_sim", "graphs") if data.get(k)]
    site.ignored = ignored
    return site


def _level_spec(file: Path, text: str, levels: dict[Any, Any], name: Any) -> dict[str, Any]:
    """One level's mapping, its lists checked (errors name the file, line and key)."""
    spec = levels[name] or {}
    if not isinstance(spec, dict):
        raise ConfigError(
            f"{_at(file, text, 'levels', name)}: expected a mapping of vertices, lanes, walls, ..."
        )
    for key in LEVEL_KEYS:
        if spec.get(key) is not None and not isinstance(spec[key], list):
            raise ConfigError(
                f"{_at(file, text, 'levels', name, key)}: expected a list, got "
                f"{type(spec[key]).__name__} {spec[key]!r:.40}"
            )
    for k, v in enumerate(spec.get("vertices") or []):
        if not (isinstance(v, list) and len(v) >= 2 and all(is_finite_number(c) for c in v[:2])):
            at = _at(file, text, "levels", name, "vertices", k)
            raise ConfigError(
                f"{at}: expected [x, y, z, name, {{params}}] with numbers x and y, got {v!r:.60}"
            )
    for k, f in enumerate(spec.get("fiducials") or []):
        if not (isinstance(f, list) and len(f) >= 3 and all(is_finite_number(c) for c in f[:2])):
            at = _at(file, text, "levels", name, "fiducials", k)
            raise ConfigError(f"{at}: expected [x, y, name] with numbers x and y, got {f!r:.60}")
    for key in ("lanes", "walls", "measurements", "doors"):
        for k, edge in enumerate(spec.get(key) or []):
            if not (isinstance(edge, list) and len(edge) >= 2):
                raise ConfigError(
                    f"{_at(file, text, 'levels', name, key, k)}: expected "
                    f"[vertex, vertex, {{params}}], got {edge!r:.60}"
                )
    elevation = spec.get("elevation", 0)
    if not is_finite_number(elevation):
        raise ConfigError(
            f"{_at(file, text, 'levels', name, 'elevation')}: expected metres, got "
            f"{elevation!r:.40}"
        )
    return spec


def _pixels(spec: dict[str, Any]) -> np.ndarray:
    return np.array([[float(v[0]), float(v[1])] for v in spec.get("vertices") or []]).reshape(-1, 2)


def _placements(
    file: Path,
    specs: dict[str, dict[str, Any]],
    reference: str,
    system: str,
    level: str | None,
    ignored: list[str],
) -> dict[str, Placement]:
    """Each level's placement: metric files none; the reference level by its measurements,
    the others on it by their common fiducials (a level sharing fewer than two is placed by
    its own measurements, unturned, and said so in `ignored`)."""
    if system == "cartesian_meters":
        return {name: _Metric() for name in specs}
    ref = specs[reference]
    needed = {reference} | ({level} if level is not None else set(specs))
    ref_scale = _scale(ref.get("measurements") or [], _pixels(ref), f"{file} level {reference}")
    out: dict[str, Placement] = {reference: Placement(ref_scale)}
    marks = {
        name: {str(f[2]): (f[0], f[1]) for f in spec.get("fiducials") or []}
        for name, spec in specs.items()
    }
    for name, spec in specs.items():
        if name == reference:
            continue
        placed = from_fiducials(marks[reference], marks[name], ref_scale)
        if placed is not None and name in needed:
            _fiducial_residual(name, placed, out[reference], marks[reference], marks[name], ignored)
        if placed is None and name in needed and spec.get("vertices"):
            ignored.append(
                f"level {name}: fewer than two fiducials shared with {reference}, "
                "so it is placed by its own measurements, not aligned"
            )
            own = spec.get("measurements") or []
            scale = _scale(own, _pixels(spec), f"{file} level {name}") if own else ref_scale
            placed = Placement(scale)
        out[name] = placed or Placement(ref_scale)
    return out


def _fiducial_residual(
    name: str,
    placed: Placement,
    reference: Placement,
    ref_marks: dict[str, tuple[float, float]],
    own: dict[str, tuple[float, float]],
    warn: list[str],
) -> None:
    """Say which fiducial of level `name` disagrees with the others: where the fit of the
    others (of all, when only two are shared) puts it, against where the reference has it."""
    common = [n for n in ref_marks if n in own]
    worst, off = "", 0.0
    for n in common:
        others = [m for m in common if m != n]
        fit = placed
        if len(others) >= 2:
            fit = (
                from_fiducials(
                    {m: ref_marks[m] for m in others}, {m: own[m] for m in others}, reference.scale
                )
                or placed
            )
        there = reference.apply(np.array([ref_marks[n]], dtype=float))[0]
        here = fit.apply(np.array([own[n]], dtype=float))[0]
        d = float(np.hypot(*(here - there)))
        if d > off:
            worst, off = n, d
    if off > FIDUCIAL_WARN_M:
        warn.append(
            f"level {name}: fiducial '{worst}' is {off:.2f} m from where the other "
            f"fiducials put it (residual of the fit; the level may be misplaced: check "
            "that fiducial)"
        )


class _Metric(Placement):
    """Metres already, y up: no change."""

    def __init__(self) -> None:
        super().__init__(1.0)

    def apply(self, pixels: np.ndarray) -> np.ndarray:
        metres: np.ndarray = np.asarray(pixels, dtype=np.float64).reshape(-1, 2).copy()
        return metres


def _levels(
    file: Path,
    text: str,
    specs: dict[str, dict[str, Any]],
    chosen: list[str],
    placements: dict[str, Placement],
    graph_idx: int,
    several: bool,
) -> BuildingSite:
    """The chosen levels' graphs joined into one (node names unique across levels), with
    their walls, doors, spawns and docks."""
    parts, walls, heights, bases, doors = [], [], [], [], []
    elevations = {name: float(specs[name].get("elevation", 0) or 0) for name in specs}
    for name in chosen:
        spec, where = specs[name], f"{file} level {name}"
        xy = placements[name].apply(_pixels(spec))
        part = _graph(
            spec.get("vertices") or [],
            xy,
            spec.get("lanes") or [],
            graph_idx,
            name,
            where,
            prefix=f"{name}:" if several else "",
        )
        if part is not None:
            parts.append(part)
        w, h = _walls(spec.get("walls") or [], xy, where)
        walls.append(w)
        heights.append(h)
        bases.append(np.full(len(w), elevations[name]))
        doors += _doors(
            spec.get("doors") or [],
            xy,
            name,
            where,
            lambda *k, n=name: _at(file, text, "levels", n, "doors", *k),
        )
    if not parts:
        where = f"{file} level {chosen[0]}" if len(chosen) == 1 else str(file)
        raise ConfigError(f"{where}: no lanes in graph {graph_idx}")
    site = _join(parts)
    site.walls, site.wall_heights = np.vstack(walls), np.concatenate(heights)
    site.wall_bases, site.doors, site.elevations = np.concatenate(bases), doors, elevations
    return site


def _join(parts: list[BuildingSite]) -> BuildingSite:
    """One graph over the levels' graphs (no lanes between levels: lifts join them)."""
    if len(parts) == 1:
        return parts[0]
    names: list[str] = []
    seen: dict[str, str] = {}
    for part in parts:
        for n in part.graph.names:
            if n in seen:
                raise ConfigError(
                    f"vertex name '{n}' is on levels {seen[n]} and {part.level}: "
                    "names must be unique in a building"
                )
            seen[n] = str(part.level)
        names += list(part.graph.names)
    offsets = np.cumsum([0] + [len(p.graph) for p in parts[:-1]])
    g = [p.graph for p in parts]
    graph = NavGraph(
        names,
        np.vstack([x.xy for x in g]),
        np.concatenate([x.lane_from.astype(np.int64) + o for x, o in zip(g, offsets, strict=True)]),
        np.concatenate([x.lane_to.astype(np.int64) + o for x, o in zip(g, offsets, strict=True)]),
        level=[x.level_names[int(k)] for x in g for k in x.level.tolist()],
        properties={
            p: np.concatenate([x.properties[p] for x in g])
            for p in (*FLAGS.values(), *NAMED.values())
        },
        bidirectional=np.concatenate([x.bidirectional for x in g]),
        speed_limit=np.concatenate([x.speed_limit for x in g]),
        mutex=_join_mutex(g),
    )
    return BuildingSite(
        None,
        graph,
        np.empty((0, 4)),
        np.empty(0),
        [s for p in parts for s in p.spawns],
        {k: v for p in parts for k, v in p.docks.items()},
        unnamed=frozenset().union(*(p.unnamed for p in parts)),
    )


def _join_mutex(graphs: list[NavGraph]) -> np.ndarray:
    """Mutex groups numbered apart per level (a group's name is per level in the file)."""
    out: list[np.ndarray] = []
    base = 0
    for g in graphs:
        m = np.asarray(g.mutex, dtype=np.int64)
        out.append(np.where(m >= 0, m + base, -1))
        base += int(m.max()) + 1 if len(m) and m.max() >= 0 else 0
    joined: np.ndarray = np.concatenate(out) if out else np.empty(0, np.int64)
    return joined


def _vertex(vertices: list[Any], k: Any, where: str, what: str) -> int:
    if not isinstance(k, int) or not 0 <= k < len(vertices):
        raise ConfigError(f"{where}: {what} names vertex {k!r}, but there are {len(vertices)}")
    return k


def _scale(measurements: list[Any], pixels: np.ndarray, where: str) -> float:
    ratios = []
    for j, m in enumerate(measurements):
        a = _vertex(list(pixels), m[0], where, f"measurements[{j}]")
        b = _vertex(list(pixels), m[1], where, f"measurements[{j}]")
        length = float(np.hypot(*(pixels[b] - pixels[a])))
        distance = _param(m[2] if len(m) > 2 else {}, "distance")
        if not distance or length <= 0:
            raise ConfigError(f"{where}: measurements[{j}] needs a distance and two vertices apart")
        ratios.append(float(distance) / length)
    if not ratios:
        raise ConfigError(
            f"{where}: no measurements, so the scale (metres per pixel) is unknown; add a "
            "measurement in traffic-editor"
        )
    return float(np.mean(ratios))


def _graph(
    vertices: list[Any],
    xy: np.ndarray,
    lanes: list[Any],
    graph_idx: int,
    level: str,
    where: str,
    prefix: str = "",
) -> BuildingSite | None:
    chosen = [
        (j, lane)
        for j, lane in enumerate(lanes)
        if int(_param(lane[2] if len(lane) > 2 else {}, "graph_idx", 0)) == graph_idx
    ]
    used = sorted(
        {_vertex(vertices, lane[e], where, f"lanes[{j}]") for j, lane in chosen for e in (0, 1)}
    )
    if not used:
        return None  # a level without lanes in this graph (a roof, another fleet's level)
    node_of = {v: k for k, v in enumerate(used)}
    names: list[str] = []
    seen: dict[str, int] = {}
    flags = {p: np.zeros(len(used), dtype=bool) for p in (*FLAGS.values(), *NAMED.values())}
    spawns: list[Spawn] = []
    docks: dict[str, str] = {}
    unnamed = set()
    for k, v in enumerate(used):
        vertex = vertices[v]
        label = str(vertex[3]) if len(vertex) > 3 and vertex[3] else f"{prefix}v{v}"
        if not (len(vertex) > 3 and vertex[3]):
            unnamed.add(label)
        if label in seen:
            raise ConfigError(f"{where}: vertices {seen[label]} and {v} are both named '{label}'")
        seen[label] = v
        names.append(label)
        params = vertex[4] if len(vertex) > 4 else {}
        for key, flag in FLAGS.items():
            flags[flag][k] = bool(_param(params, key, False))
        for key, flag in NAMED.items():
            flags[flag][k] = bool(_param(params, key, ""))
        if _param(params, "spawn_robot_name"):
            robot_type = str(_param(params, "spawn_robot_type", ""))
            spawns.append(Spawn(str(_param(params, "spawn_robot_name")), robot_type, label))
        if _param(params, "dock_name"):
            docks[label] = str(_param(params, "dock_name"))
    src = np.array([node_of[lane[0]] for _, lane in chosen], dtype=np.int64)
    dst = np.array([node_of[lane[1]] for _, lane in chosen], dtype=np.int64)
    params = [lane[2] if len(lane) > 2 else {} for _, lane in chosen]
    speed = np.array([float(_param(p, "speed_limit", 0) or 0) for p in params])
    groups: dict[str, int] = {}
    mutex = [
        groups.setdefault(g, len(groups)) if (g := str(_param(p, "mutex", "") or "")) else -1
        for p in params
    ]
    graph = NavGraph(
        names,
        xy[used],
        src,
        dst,
        level=[level] * len(used),
        properties=flags,
        bidirectional=np.array([bool(_param(p, "bidirectional", False)) for p in params]),
        speed_limit=np.where(speed > 0, speed, np.inf),
        mutex=np.array(mutex, dtype=np.int64),
    )
    return BuildingSite(
        level, graph, np.empty((0, 4)), np.empty(0), spawns, docks, unnamed=frozenset(unnamed)
    )


def _walls(walls: list[Any], xy: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray]:
    ends = [
        (
            _vertex(list(xy), w[0], where, f"walls[{j}]"),
            _vertex(list(xy), w[1], where, f"walls[{j}]"),
        )
        for j, w in enumerate(walls)
    ]
    segments = np.array([[*xy[a], *xy[b]] for a, b in ends]).reshape(-1, 4)
    heights = np.array(
        [float(_param(w[2] if len(w) > 2 else {}, "texture_height", WALL_HEIGHT_M)) for w in walls]
    )
    return segments, heights


def _doors(doors: list[Any], xy: np.ndarray, level: str, where: str, at: Any = None) -> list[Door]:
    """A level's doors, checked: a known type, two ends apart (errors name the line)."""
    out = []
    for j, d in enumerate(doors):
        place = at(j) if at is not None else f"{where}: doors[{j}]"
        if not isinstance(d, list) or len(d) < 2:
            raise ConfigError(f"{place}: expected [vertex, vertex, {{name, type}}]")
        a = _vertex(list(xy), d[0], where, f"doors[{j}]")
        b = _vertex(list(xy), d[1], where, f"doors[{j}]")
        params = d[2] if len(d) > 2 else {}
        name = str(_param(params, "name", "") or f"door_{j}")
        kind = str(_param(params, "type", "hinged") or "hinged")
        if kind not in DOOR_TYPES:
            guess = closest(kind, list(DOOR_TYPES))
            hint = f"did you mean '{guess}'?" if guess else f"use one of {', '.join(DOOR_TYPES)}"
            typed = at(j, 2, "type") if at is not None else place
            raise ConfigError(f"{typed}: door {name!r} has type {kind!r}: {hint}")
        ends = np.array([xy[a], xy[b]], dtype=float)
        if float(np.hypot(*(ends[1] - ends[0]))) < 1e-3:
            raise ConfigError(
                f"{place}: door {name!r} has no width (its two vertices are "
                "on one spot): give it two vertices apart"
            )
        out.append(Door(name, kind, ends, level, place))
    return out


def _unique_doors(doors: list[Door]) -> None:
    """Door names are unique in a building (RMF's door requests name them)."""
    seen: dict[str, Door] = {}
    for door in doors:
        first = seen.setdefault(door.name, door)
        if first is not door:
            raise ConfigError(
                f"{door.where}: a second door named {door.name!r} (the first: "
                f"{first.where}): door names must be unique"
            )
